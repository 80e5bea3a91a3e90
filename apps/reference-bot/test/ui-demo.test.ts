// `--ui`: the demo for a person. The command starts the sim with its chat page and the bot against
// it, prints the page's URL, answers a user there, and stops both on Ctrl-C (SIGINT).

import { spawn } from "node:child_process";
import { once } from "node:events";
import { createInterface } from "node:readline";
import { describe, expect, it } from "vitest";
import { BOT_COMMAND, E2E_TIMEOUT_MS } from "./harness.js";

interface Envelope<T> {
  readonly ok: boolean;
  readonly result: T;
}

async function control<T>(root: string, path: string, body?: unknown): Promise<T> {
  const response = await fetch(`${root}/_sim${path}`, {
    method: body === undefined ? "GET" : "POST",
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const envelope = (await response.json()) as Envelope<T>;
  expect(envelope.ok).toBe(true);
  return envelope.result;
}

describe("--ui", { timeout: E2E_TIMEOUT_MS }, () => {
  it("serves the chat page, answers its user, and stops on SIGINT", async () => {
    const [file, ...args] = BOT_COMMAND;
    const { TELEGRAM_BOT_TOKEN: _token, TELEGRAM_API_ROOT: _root, ...env } = process.env;
    const child = spawn(file as string, [...args, "--ui"], {
      env: { ...env, LOG_LEVEL: "silent" },
      stdio: ["ignore", "pipe", "inherit"],
    });
    const exited = once(child, "exit") as Promise<[number | null]>;
    const lines = createInterface({ input: child.stdout as NodeJS.ReadableStream });
    let url = "";
    for await (const line of lines) {
      const match = /^Open the chat page to talk to it: (http:\/\/127\.0\.0\.1:\d+\/)$/.exec(line);
      if (match !== null) {
        url = match[1] as string;
        break;
      }
    }
    const root = url.replace(/\/$/, "");
    const page = await fetch(url);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain("/_sim/assets/app.js");
    const { chats } = await control<{ chats: { chat: { id: number; first_name: string } }[] }>(
      root,
      "/page/chats",
    );
    expect(chats.map((entry) => entry.chat.first_name)).toEqual(["You"]);
    const you = chats[0]?.chat.id as number;
    const help = await control<{ message_id: number }>(root, "/messages/command", {
      user_id: you,
      chat_id: you,
      command: "help",
    });
    const reply = await control<{ text: string }>(root, "/wait/message", {
      chat_id: you,
      after_message_id: help.message_id,
      timeout_ms: 20_000,
    });
    expect(reply.text).toContain("I am the telepace reference bot");
    child.kill("SIGINT");
    const [code] = await exited;
    expect(code).toBe(0);
    await expect(fetch(url)).rejects.toThrow();
  });
});
