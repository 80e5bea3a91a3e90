// The README's first example, examples/progress-bot.ts (shown there verbatim), run as a user runs
// it — a child process against the Bot API simulator over loopback: a text gets a progress
// message, replaced by the final answer; SIGTERM ends the polling and the process exits 0.

import { spawn } from "node:child_process";
import { once } from "node:events";
import { fileURLToPath } from "node:url";
import type { Message } from "@grammyjs/types";
import { start } from "@telepace/bot-api-sim";
import { eventually } from "@telepace/testing";
import { describe, expect, expectTypeOf, it } from "vitest";
import type { SendOutcome, TelegramClient } from "../src/index.js";

const example = fileURLToPath(new URL("../examples/progress-bot.ts", import.meta.url));

describe("the README's Usage", { timeout: 30_000 }, () => {
  it("answers a text through a progress message and stops on SIGTERM", async () => {
    const sim = await start();
    try {
      const child = spawn(
        process.execPath,
        ["--conditions=@telepace/source", "--import", "tsx", example],
        {
          env: { ...process.env, TELEGRAM_BOT_TOKEN: sim.token, TELEGRAM_API_ROOT: sim.apiRoot },
          stdio: ["ignore", "pipe", "pipe"],
        },
      );
      let stdout = "";
      let stderr = "";
      child.stdout.on("data", (chunk: Buffer) => {
        stdout += chunk.toString();
      });
      child.stderr.on("data", (chunk: Buffer) => {
        stderr += chunk.toString();
      });
      const exited = once(child, "exit");

      const ada = sim.users.create({ firstName: "Ada" });
      const chat = sim.chats.createPrivate(ada);
      const hello = sim.sendText(ada, chat, "hello");
      const final = await sim.waitForMessage(chat, (m) => m.text === "Done: hello", {
        afterMessageId: hello.message_id,
        timeoutMs: 20_000,
      });
      // The progress message went first and is gone once the final arrived.
      const events = sim.transcript(chat).events.filter((event) => event.actor === "bot");
      const progress = events.find((event) => event.text === "Working… 0%");
      expect(progress?.messageId).toBeLessThan(final.message_id);
      await eventually("the progress message is deleted", () => {
        const texts = sim.transcript(chat).messages.map((m) => m.text);
        return texts.length === 2 && texts[1] === "Done: hello";
      });
      expect(sim.transcript(chat).messages.map((m) => m.text)).toEqual(["hello", "Done: hello"]);

      child.kill("SIGTERM");
      expect(await exited).toEqual([0, null]);
      expect(stderr).toBe("");
      expect(stdout).toMatch(/delivered: 3,/);
    } finally {
      await sim.close();
    }
  });

  it("types a delivered send's result as the message (no not-modified case)", () => {
    expectTypeOf<
      Extract<SendOutcome<Message.TextMessage>, { status: "delivered" }>["result"]
    >().toEqualTypeOf<Message.TextMessage>();
    expectTypeOf<ReturnType<TelegramClient["sendMessage"]>>().toEqualTypeOf<
      Promise<SendOutcome<Message.TextMessage>>
    >();
  });
});
