// The contenders of the streaming comparison: telepace's client.streamMessage, @grammyjs/stream
// with auto-retry, and latest-only edits written by hand with auto-retry.

import { autoRetry } from "@grammyjs/auto-retry";
import { streamApi } from "@grammyjs/stream";
import { TelegramClient } from "@telepace/client";
import { classifyFailure, type FailureVerdict, streamDefaults } from "@telepace/outbox";
import { ScaledClock } from "@telepace/testing";
import { Api } from "grammy";

/** Where a streamer sends and how fast Telegram's time runs there. */
export interface StreamTarget {
  readonly apiRoot: string;
  readonly token: string;
  readonly scale: number;
  /** Aborted at the deadline. */
  readonly signal: AbortSignal;
}

/** One contender. */
export interface Streamer {
  readonly name: string;
  readonly settings: Readonly<Record<string, string | number>>;
  /** Telegram ms a contender keeps at least between two drafts' starts, when it has a floor. */
  readonly draftFloorMs?: number | undefined;
  /** Streams `source` into the chat; resolves when the contender is done (or gave up). */
  stream(chatId: number, source: AsyncIterable<string>): Promise<void>;
  /** Waits for the requests it still has under way (none once aborted), then lets go. */
  close(): Promise<void>;
}

/** telepace: `client.streamMessage` with every default, on a clock in Telegram time. */
export function telepaceStreamer(target: StreamTarget): Streamer {
  const classify = (error: unknown, context: { idempotent: boolean }): FailureVerdict => {
    const verdict = classifyFailure(error, context);
    return verdict.action === "rate-limited"
      ? { action: "rate-limited", retryAfterMs: verdict.retryAfterMs * target.scale }
      : verdict;
  };
  const client = new TelegramClient({
    token: target.token,
    apiRoot: target.apiRoot,
    clock: new ScaledClock(target.scale),
    requestTimeoutMs: 30_000 * target.scale,
    outbox: { classifyFailure: classify },
  });
  return {
    name: "telepace client.streamMessage",
    settings: {
      drafts: "private chats, as fast as answered",
      draftIntervalMs: streamDefaults.draftIntervalMs,
      clock: `×${target.scale}`,
    },
    draftFloorMs: streamDefaults.draftIntervalMs,
    async stream(chatId, source) {
      const stream = client.streamMessage(chatId, source, { signal: target.signal });
      await stream.result.catch(() => undefined);
    },
    // Drains: a replaced progress message is deleted once the final arrived (Telegram ms).
    close: () => client.close({ drain: true, timeoutMs: 10_000 }),
  };
}

function grammyApi(target: StreamTarget): Api {
  const api = new Api(target.token, { apiRoot: target.apiRoot });
  // auto-retry with its defaults, installed before the plugin as its README asks.
  api.config.use(autoRetry());
  return api;
}

/** @grammyjs/stream 1.1.0's `streamMessage` over grammY's Api with auto-retry. */
export function grammyStreamPlugin(target: StreamTarget): Streamer {
  const api = grammyApi(target);
  const signal = target.signal as unknown as Parameters<Api["sendMessage"]>[3];
  return {
    name: "@grammyjs/stream + auto-retry",
    settings: { plugin: "1.1.0", node: process.versions.node },
    async stream(chatId, source) {
      await streamApi(api.raw)
        .streamMessage(chatId, 256, source, undefined, undefined, signal as never)
        .catch(() => undefined);
    },
    close: async () => {},
  };
}

/**
 * What a bot author writes by hand: a message, then one editMessageText in flight at a time with
 * the newest text, a new message when the text passes 4096, auto-retry for 429s.
 */
export function latestOnlyEdits(target: StreamTarget): Streamer {
  const api = grammyApi(target);
  const signal = target.signal as unknown as Parameters<Api["sendMessage"]>[3];
  return {
    name: "latest-only edits + auto-retry",
    settings: { edits: "one in flight, newest text", split: "new message past 4096" },
    async stream(chatId, source) {
      let done = false;
      let sealed = ""; // text of earlier messages
      let text = "";
      let wake: (() => void) | undefined;
      const pull = (async () => {
        for await (const token of source) {
          text += token;
          wake?.();
        }
        done = true;
        wake?.();
      })();
      let messageId: number | undefined;
      let shown = "";
      try {
        for (;;) {
          const own = text.slice(sealed.length);
          if (own.length > 4096) {
            const cut = own.lastIndexOf(" ", 4096) + 1 || 4096;
            const chunk = own.slice(0, cut);
            if (messageId === undefined) await api.sendMessage(chatId, chunk, undefined, signal);
            else await api.editMessageText(chatId, messageId, chunk, undefined, signal);
            sealed += chunk;
            messageId = undefined;
            shown = "";
            continue;
          }
          if (own.trim() !== "" && own !== shown) {
            if (messageId === undefined) {
              messageId = (await api.sendMessage(chatId, own, undefined, signal)).message_id;
            } else {
              await api.editMessageText(chatId, messageId, own, undefined, signal);
            }
            shown = own;
            continue;
          }
          if (done) break;
          await new Promise<void>((resolve) => {
            wake = resolve;
          });
          wake = undefined;
        }
      } catch {
        // gave up (the deadline's abort): what is on screen stays
      }
      await pull;
    },
    close: async () => {},
  };
}
