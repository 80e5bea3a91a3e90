// When the demo's bot cannot start — a file where the data directory should be, a metrics port
// another process holds — the demo prints the bot's own reason, one line, and exits with its code:
// no second "unexpected failure" line about the bot exiting before it polled.

import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it, type TestContext } from "vitest";
import { createLogger } from "../src/logger.js";
import { ReferenceBot, StartupError } from "../src/reference-bot.js";
import { BOT_COMMAND, E2E_TIMEOUT_MS, MemoryLog } from "./harness.js";

/** A temporary directory holding a plain file named `file`; both removed after the test. */
function aFile({ onTestFinished }: TestContext): string {
  const dir = mkdtempSync(join(tmpdir(), "telepace-startup-"));
  onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
  const file = join(dir, "file");
  writeFileSync(file, "not a journal");
  return file;
}

/** Runs the embedded demo (no token) with `args`; resolves with its exit code and stderr lines. */
function runDemo(args: readonly string[]): Promise<{ code: number | null; stderr: string[] }> {
  const [file, ...command] = BOT_COMMAND;
  const child = spawn(file as string, [...command, ...args, "--duration", "1"], {
    env: { ...process.env, TELEGRAM_BOT_TOKEN: "", TELEGRAM_API_ROOT: "", LOG_LEVEL: "" },
    stdio: ["ignore", "ignore", "pipe"],
  });
  let stderr = "";
  child.stderr.on("data", (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  return new Promise((resolve) => {
    child.once("close", (code) => resolve({ code, stderr: stderr.trimEnd().split("\n") }));
  });
}

describe("a demo whose bot cannot start", { timeout: E2E_TIMEOUT_MS, concurrent: true }, () => {
  it("given a file as --data-dir, says it is not a directory, once", async (context) => {
    const file = aFile(context);
    expect(await runDemo(["--data-dir", file])).toEqual({
      code: 1,
      stderr: [`reference-bot: Cannot open the journal in ${file}: it is not a directory`],
    });
  });

  it("given a --data-dir under a file, says a part of its path is a file, once", async (context) => {
    const dir = join(aFile(context), "journal");
    expect(await runDemo(["--data-dir", dir])).toEqual({
      code: 1,
      stderr: [
        `reference-bot: Cannot open the journal in ${dir}: a part of its path is a file, not a directory`,
      ],
    });
  });

  it("given a --metrics-port another process holds, says so, once", async ({ onTestFinished }) => {
    const holder: Server = createServer();
    await new Promise<void>((resolve) => holder.listen(0, "127.0.0.1", resolve));
    onTestFinished(() => new Promise<void>((resolve) => holder.close(() => resolve())));
    const { port } = holder.address() as { port: number };
    expect(await runDemo(["--metrics-port", String(port)])).toEqual({
      code: 1,
      stderr: [`reference-bot: Cannot serve metrics on 127.0.0.1:${port} (EADDRINUSE)`],
    });
  });

  it("given a bad --metrics-port, names it, once, with the configuration exit code", async () => {
    expect(await runDemo(["--metrics-port", "99999"])).toEqual({
      code: 2,
      stderr: ['reference-bot: --metrics-port must be a port from 0 to 65535, got "99999"'],
    });
  });
});

describe("ReferenceBot.launch with a data directory that is a file", () => {
  it("is a StartupError saying it is not a directory, before any request", async (context) => {
    const file = aFile(context);
    const logger = createLogger("silent", [], new MemoryLog());
    // No server listens here: the directory is checked before the Bot API is asked anything.
    const launched = ReferenceBot.launch({
      token: "123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw8",
      apiRoot: "http://127.0.0.1:1",
      logger,
      dataDir: file,
    });
    await expect(launched).rejects.toThrow(
      new StartupError(`Cannot open the journal in ${file}: it is not a directory`),
    );
  });
});
