// Startup against a Bot API that will not have the bot: a rejected token, an unreachable root and
// a failing getMe are each one StartupError line without the token.

import { type BotApiSim, start } from "@telepace/bot-api-sim";
import { afterEach, describe, expect, it } from "vitest";
import { createLogger } from "../src/logger.js";
import { ReferenceBot, StartupError } from "../src/reference-bot.js";
import { E2E_TIMEOUT_MS, MemoryLog } from "./harness.js";

const WRONG_TOKEN = "987654321:AAF-wrongwrongwrongwrongwrongwrong_x";

let sim: BotApiSim | undefined;
afterEach(async () => {
  await sim?.close();
  sim = undefined;
});

/** Launches with a logger that scrubs nothing, so a leak would show in `log`. */
async function launchError(token: string, apiRoot: string, log: MemoryLog): Promise<StartupError> {
  const logger = createLogger("trace", [], log);
  const error = await ReferenceBot.launch({ token, apiRoot, logger, pollTimeoutS: 1 }).then(
    async (bot) => {
      await bot.stop();
      throw new Error("expected launch to fail");
    },
    (error: unknown) => error,
  );
  expect(error).toBeInstanceOf(StartupError);
  return error as StartupError;
}

function expectOneCleanLine(error: Error, log: MemoryLog, token: string): void {
  expect(error.message).not.toContain("\n");
  const [, secret = ""] = token.split(":");
  for (const text of [error.message, error.stack ?? "", log.text, String(error)]) {
    expect(text).not.toContain(token);
    expect(text).not.toContain(secret);
  }
}

describe("ReferenceBot.launch", { timeout: E2E_TIMEOUT_MS }, () => {
  it("reports a token the Bot API rejects (401)", async () => {
    sim = await start();
    const log = new MemoryLog();
    const error = await launchError(WRONG_TOKEN, sim.apiRoot, log);
    expect(error.message).toBe(
      `The Bot API at ${sim.apiRoot} rejected the token (401 Unauthorized)`,
    );
    expectOneCleanLine(error, log, WRONG_TOKEN);
    expect(sim.counters().calls.getMe ?? 0).toBe(0);
    expect(sim.counters().responses["401"]).toBe(1);
  });

  it("reports an API root it cannot reach", async () => {
    const log = new MemoryLog();
    const error = await launchError(WRONG_TOKEN, "http://127.0.0.1:1", log);
    expect(error.message).toMatch(/^Cannot reach the Bot API at http:\/\/127\.0\.0\.1:1 \(\w+\)$/);
    expectOneCleanLine(error, log, WRONG_TOKEN);
  });

  it("reports any other getMe failure with its code and description", async () => {
    sim = await start();
    sim.faults.failNext("getMe", 1, { code: 500 });
    const log = new MemoryLog();
    const error = await launchError(sim.token, sim.apiRoot, log);
    expect(error.message).toBe(`getMe failed at ${sim.apiRoot}: 500 Internal Server Error`);
    expectOneCleanLine(error, log, sim.token);
  });

  it("starts with a good token: getMe describes the bot, polling runs", async () => {
    sim = await start();
    const log = new MemoryLog();
    const logger = createLogger("info", [sim.token], log);
    const bot = await ReferenceBot.launch({
      token: sim.token,
      apiRoot: sim.apiRoot,
      logger,
      pollTimeoutS: 1,
    });
    try {
      expect(bot.me).toEqual(sim.bot);
      const started = log.records().find((record) => record.msg === "bot started");
      expect(started).toMatchObject({ username: sim.bot.username, id: sim.bot.id });
    } finally {
      await bot.stop();
    }
    expect(log.records().some((record) => record.msg === "stopped")).toBe(true);
  });
});
