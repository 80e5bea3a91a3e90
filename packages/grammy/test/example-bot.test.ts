// The README's bot.ts, run as a real process against the sim: /work streams progress, the final
// replaces the progress message, and SIGINT stops it gracefully.

import { spawn } from "node:child_process";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { type BotApiSim, start } from "@telepace/bot-api-sim";
import { afterEach, describe, expect, it } from "vitest";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");

let sim: BotApiSim | undefined;
afterEach(async () => {
  await sim?.close({ timeoutMs: 1_000 });
  sim = undefined;
});

describe("examples/bot.ts", () => {
  it("runs: progress, a final that replaces it, a graceful SIGINT", async () => {
    sim = await start({ timeScale: 20 });
    const child = spawn(
      process.execPath,
      ["--import", "tsx", "--conditions=@telepace/source", join(root, "examples", "bot.ts")],
      {
        cwd: root,
        env: { ...process.env, TELEGRAM_BOT_TOKEN: sim.token, TELEGRAM_API_ROOT: sim.apiRoot },
        stdio: ["ignore", "ignore", "pipe"],
      },
    );
    let stderr = "";
    child.stderr.on("data", (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    const exited = new Promise<number | null>((resolve) => child.once("exit", resolve));
    try {
      const user = sim.users.create();
      const chat = sim.chats.createPrivate(user);
      const command = sim.sendCommand(user, chat, "work");
      const done = await sim.waitForMessage(chat, (message) => message.text === "Done.", {
        afterMessageId: command.message_id,
        timeoutMs: 20_000,
      });
      const deleted = await sim.waitForEvent(chat, (event) => event.kind === "delete", {
        timeoutMs: 10_000,
      });
      expect(deleted.messageId).toBeLessThan(done.message_id);
      expect(sim.transcript(chat.id).messages.map((message) => message.text)).toEqual([
        "/work",
        "Done.",
      ]);
      child.kill("SIGINT");
      expect(await exited).toBe(0);
      expect(stderr).toBe("");
    } finally {
      child.kill("SIGKILL");
    }
  }, 30_000);
});
