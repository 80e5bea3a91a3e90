// The token never appears in any output: every log line at trace level over a run full of faults
// (resets, 5xx, malformed answers, 429s, a webhook conflict), every error the bot surfaces, and its
// stats. The logger here scrubs nothing, so what is checked is what the bot's parts emit.

import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { createLogger, scrub } from "../src/logger.js";
import { ReferenceBot, StartupError } from "../src/reference-bot.js";
import {
  cancelData,
  E2E_TIMEOUT_MS,
  eventually,
  launchFixture,
  MemoryLog,
  REPLY_TIMEOUT_MS,
  replyTo,
  TIME_SCALE,
} from "./harness.js";

describe("the token", { timeout: E2E_TIMEOUT_MS }, () => {
  it("never appears in logs, errors or stats over a run with faults", async () => {
    await using fixture = await launchFixture({ level: "trace", secrets: [] });
    const { sim, bot, log } = fixture;
    const token = sim.token;
    const secret = token.slice(token.indexOf(":") + 1);
    const outputs: string[] = [];

    sim.faults.resetNext("getUpdates", 1);
    sim.faults.failNext("getFile", 1, { code: 502 });
    sim.faults.resetNext("download", 1, { afterProcessing: true });
    sim.faults.malformNext("editMessageText", 2);
    sim.faults.failNext("sendMessage", 2, { code: 429, retryAfter: 1 / TIME_SCALE });
    sim.faults.failNext("answerCallbackQuery", 1, { code: 500 });
    sim.faults.failNext("deleteMessage", 1, { code: 503 });

    const alice = sim.users.create({ firstName: "Alice" });
    const chat = sim.chats.createPrivate(alice);
    const hello = sim.sendText(alice, chat, `my token is not ${secret.slice(0, 4)}`);
    await replyTo(sim, chat, hello, () => true);
    // Two documents: one meets the getFile fault, the other the download reset; each is
    // answered with an apology.
    for (const name of ["one.bin", "two.bin"]) {
      const sent = sim.sendDocument(alice, chat, { bytes: randomBytes(300_000), fileName: name });
      await replyTo(sim, chat, sent, () => true);
    }
    const file = sim.sendCommand(alice, chat, "file", "64");
    await replyTo(sim, chat, file, (m) => "document" in m);
    const work = sim.sendCommand(alice, chat, "work", "30");
    const progress = await replyTo(sim, chat, work, (m) => cancelData(m) !== undefined);
    await sim.waitForEvent(chat, (event) => event.kind === "edit", { timeoutMs: REPLY_TIMEOUT_MS });
    sim.pressButton(alice, chat, progress.message_id, cancelData(progress) as string);
    await eventually("the job was cancelled", () => bot.stats().jobs.ended.cancelled === 1);

    // A webhook makes polling fail for good; its error is output too.
    await fetch(`${sim.apiRoot}/bot${token}/setWebhook?url=https://example.com/hook`);
    const pollingStack = await bot.polling.catch((error: unknown) => (error as Error).stack);
    expect(pollingStack).toMatch(/^PollingStoppedError: getUpdates answered 409/);
    outputs.push(String(pollingStack));
    outputs.push(JSON.stringify(await bot.stop()), JSON.stringify(bot.stats()));

    // A launch with the wrong token and one against nothing fail with errors that are output too.
    for (const apiRoot of [sim.apiRoot, "http://127.0.0.1:1"]) {
      const wrong = `${token.split(":")[0]}:${secret.split("").reverse().join("")}`;
      const error = await ReferenceBot.launch({
        token: wrong,
        apiRoot,
        logger: createLogger("trace", [], log),
      }).catch((caught: unknown) => caught as Error);
      expect(error).toBeInstanceOf(StartupError);
      outputs.push(String(error), (error as Error).stack ?? "");
      for (const text of [...outputs, log.text]) expect(text).not.toContain(wrong.split(":")[1]);
    }

    // The run really went through the faulty paths it claims to.
    const messages = log.records().map((record) => record.msg);
    for (const line of [
      "getUpdates failed; polling again after a delay",
      "download failed",
      "rate limited (429)",
      "op requeued",
      "write failed",
    ])
      expect(messages).toContain(line);
    expect(sim.counters().faultsInjected).toBeGreaterThanOrEqual(9);
    for (const text of [...outputs, log.text]) {
      expect(text).not.toContain(token);
      expect(text).not.toContain(secret);
    }
  });
});

describe("scrub", () => {
  it("replaces every occurrence of every secret", () => {
    expect(scrub("a SECRET b SECRET", ["SECRET"])).toBe("a <redacted> b <redacted>");
    expect(scrub("/bot1:abc/getMe and 1:abc", ["bot1:abc", "1:abc"])).toBe(
      "/<redacted>/getMe and <redacted>",
    );
    expect(scrub("nothing here", ["SECRET"])).toBe("nothing here");
  });

  it("ignores an empty secret instead of redacting between every character", () => {
    expect(scrub("text", [""])).toBe("text");
    expect(scrub("text", [])).toBe("text");
  });

  it("is applied by createLogger to every line, whatever field carries the secret", () => {
    const log = new MemoryLog();
    const token = "123:SECRETSECRETSECRETSECRETSECRETSECR";
    const logger = createLogger("trace", [token], log);
    logger.info({ url: `https://api.telegram.org/bot${token}/getMe` }, "calling");
    logger.error({ err: new Error(`failed at /bot${token}/x`) }, `oops ${token}`);
    logger.child({ token }).trace("child");
    expect(log.lines).toHaveLength(3);
    expect(log.text).not.toContain("SECRET");
    expect(log.text.match(/<redacted>/g)?.length).toBeGreaterThanOrEqual(4);
    expect(log.records()[0]).toMatchObject({ url: "https://api.telegram.org/bot<redacted>/getMe" });
  });
});
