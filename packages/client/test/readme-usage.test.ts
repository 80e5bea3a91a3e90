// The README's Usage block, verbatim, compiled under the package's strict tsconfig (typecheck
// covers test/) and run against a loopback Bot API. A test below keeps the two copies equal.

import { readFileSync } from "node:fs";
import type { Message } from "@grammyjs/types";
import { silentLogger } from "@telepace/core";
import { afterEach, describe, expect, expectTypeOf, it, vi } from "vitest";
import { InputFile, type SendOutcome, TelegramClient } from "../src/index.js";
import { message, ok } from "./support/bot-server.js";
import { connect, TOKEN } from "./support/client.js";

/** Runs the README's Usage with the names it takes from its surroundings. */
async function readmeUsage(context: {
  readonly offset: number;
  readonly chatId: number;
  readonly fileId: string;
  readonly query: { readonly id: string };
}): Promise<unknown[]> {
  const { offset, chatId, fileId, query } = context;
  const logger = silentLogger;
  const signal = new AbortController().signal;
  const seen: unknown[] = [];
  const consume = (chunk: unknown) => seen.push(chunk);
  const console = { log: (value: unknown) => seen.push(value) };
  // README:usage-start
  await using client = new TelegramClient({
    // biome-ignore lint/style/noNonNullAssertion: the README's code, verbatim
    token: process.env.TELEGRAM_BOT_TOKEN!,
    apiRoot: process.env.TELEGRAM_API_ROOT, // a local Bot API server or the telepace sim; optional
    logger, // any pino-compatible logger; optional
  });

  // Long polling bypasses the outbox; a 429 is slept out (cancellable).
  const updates = await client.getUpdates({ offset, timeout: 30 }, { signal });

  // Writes resolve with a typed outcome and never reject (except when you abort them).
  const sent = await client.sendMessage(chatId, "Working… 0%", {
    reply_markup: { inline_keyboard: [[{ text: "Cancel", callback_data: "cancel" }]] },
  });
  if (sent.status === "delivered") {
    const progressId = sent.result.message_id;
    for (const pct of [10, 20, 30]) {
      // Fire and forget: pending edits of one message coalesce to the latest text.
      void client.editMessageText(chatId, progressId, `Working… ${pct}%`);
    }
    // Replace the progress message: sent first, the old one deleted only once this was delivered.
    const final = await client.sendMessage(chatId, "Done.", {}, { replaceMessageId: progressId });
    if (final.status === "failed" && final.maybeDelivered) {
      // The request may have reached Telegram; it was not resent, to avoid a duplicate.
    }
  }

  await client.sendDocument(chatId, new InputFile(Buffer.from("report"), "report.txt"));
  await client.sendChatAction(chatId, "typing");
  await client.answerCallbackQuery(query.id, { text: "Cancelled" });

  const file = await client.getFile(fileId);
  const download = await client.downloadFile(file, { range: { start: 0, end: 65_535 } });
  for await (const chunk of download.body) consume(chunk);

  console.log(client.outbox.snapshot()); // pending per chat and priority, freezes, counters
  // `await using` closes it: the outbox drains (10 s deadline by default), then the pool closes.
  // README:usage-end
  seen.push(updates);
  return seen;
}

function usageBlockOfReadme(): string {
  const readme = readFileSync(new URL("../README.md", import.meta.url), "utf8");
  const block =
    /## Usage\n\n(?:<!-- example: prelude[\s\S]*?-->\n)?```ts\n([\s\S]*?)```/.exec(readme)?.[1] ??
    "";
  return block
    .split("\n")
    .filter((line) => !line.startsWith("import "))
    .join("\n")
    .trim();
}

function usageBlockOfThisFile(): string {
  const source = readFileSync(new URL(import.meta.url), "utf8");
  const block = /\/\/ README:usage-start\n([\s\S]*?)\n\s*\/\/ README:usage-end/.exec(source)?.[1];
  return (block ?? "")
    .split("\n")
    .map((line) => line.replace(/^ {2}/, ""))
    .filter((line) => !line.trimStart().startsWith("// biome-ignore"))
    .join("\n")
    .trim();
}

afterEach(() => {
  vi.unstubAllEnvs();
});

describe("the README's Usage", { timeout: 20_000 }, () => {
  it("is the block this file compiles and runs", () => {
    expect(usageBlockOfThisFile()).toBe(usageBlockOfReadme());
    expect(usageBlockOfReadme()).toContain("sent.result.message_id");
  });

  it("runs against a Bot API on loopback", async () => {
    const { server } = await connect((request, res) => {
      switch (request.method) {
        case "getUpdates":
          return ok(res, []);
        case "sendMessage":
        case "editMessageText":
        case "sendDocument":
          return ok(res, message(server.requests.length, 7, "x"));
        case "getFile":
          return ok(res, { file_id: "F", file_unique_id: "U", file_path: "docs/f.txt" });
        case "file:docs/f.txt":
          res.writeHead(200, { "content-length": "4" });
          return void res.end("data");
        default:
          return ok(res, true);
      }
    });
    vi.stubEnv("TELEGRAM_BOT_TOKEN", TOKEN);
    vi.stubEnv("TELEGRAM_API_ROOT", server.url);
    const seen = await readmeUsage({ offset: 1, chatId: 7, fileId: "F", query: { id: "q" } });
    expect(Buffer.concat(seen.filter((s) => s instanceof Uint8Array)).toString()).toBe("data");
    expect(server.methods).toContain("deleteMessage");
    expect(server.methods.filter((m) => m === "sendMessage")).toHaveLength(2);
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
