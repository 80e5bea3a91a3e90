// The README's "Streaming a reply" block, verbatim, compiled under the package's strict tsconfig
// and run against the Bot API simulator; a test keeps the two copies equal.

import { readFileSync } from "node:fs";
import { start } from "@telepace/bot-api-sim";
import { describe, expect, it } from "vitest";
import { TelegramClient } from "../src/index.js";

async function readmeStreaming(
  client: TelegramClient,
  context: { offset: number; chatId: number; question: string; questionId: number },
): Promise<unknown[]> {
  const { offset, chatId, question, questionId } = context;
  const seen: unknown[] = [];
  const console = { log: (...values: unknown[]) => seen.push(values) };
  async function* answer(text: string, signal: AbortSignal) {
    for (const word of `You asked: ${text}`.split(" ")) {
      if (signal.aborted) return;
      yield `${word} `;
    }
  }
  // README:stream-start
  // Every update goes through the router first: a Stop press reaches its stream.
  for (const update of await client.getUpdates({ offset, timeout: 30 })) {
    if (client.streams.handleUpdate(update)) continue;
    // … the bot's own handling
  }

  // Drafts in a private chat (a group gets a progress message), continued past 4096, a Stop button.
  const stream = client.streamMessage(chatId, (signal) => answer(question, signal), {
    canStop: true,
    params: { reply_parameters: { message_id: questionId } },
  });
  const outcome = await stream.result;
  if (outcome.status === "delivered") {
    const ids = outcome.messages.map((message) => message.message_id);
    console.log(ids, outcome.stopped);
  }
  // README:stream-end
  return seen;
}

function blockOfReadme(): string {
  const readme = readFileSync(new URL("../README.md", import.meta.url), "utf8");
  const block =
    /### Streaming a reply\n\n(?:<!--[\s\S]*?-->\n)?```ts\n([\s\S]*?)```/.exec(readme)?.[1] ?? "";
  return block
    .split("\n")
    .filter((line) => !line.startsWith("import "))
    .join("\n")
    .trim();
}

function blockOfThisFile(): string {
  const source = readFileSync(new URL(import.meta.url), "utf8");
  const block = /\/\/ README:stream-start\n([\s\S]*?)\n\s*\/\/ README:stream-end/.exec(source)?.[1];
  return (block ?? "")
    .split("\n")
    .map((line) => line.replace(/^ {2}/, ""))
    .join("\n")
    .trim();
}

describe("the README's streaming block", { timeout: 20_000 }, () => {
  it("is the block this file compiles and runs", () => {
    expect(blockOfThisFile()).toBe(blockOfReadme());
  });

  it("runs against the sim", async () => {
    await using sim = await start();
    const user = sim.users.create({ firstName: "Ada" });
    const chat = sim.chats.createPrivate(user);
    const asked = sim.sendText(user, chat, "what is a draft?");
    await using client = new TelegramClient({ token: sim.token, apiRoot: sim.apiRoot });
    const seen = await readmeStreaming(client, {
      offset: 0,
      chatId: chat.id,
      question: "what is a draft?",
      questionId: asked.message_id,
    });
    expect(seen).toHaveLength(1);
    const last = sim.transcript(chat).messages.at(-1);
    expect(last?.text).toBe("You asked: what is a draft?");
  });
});
