// A TelegramClient against a BotServer, with pacing off unless a test turns it on.

import { type Clock, ManualClock } from "@telepace/core";
import { afterEach } from "vitest";
import { TelegramClient, type TelegramClientOptions } from "../../src/index.js";
import { BotServer, type Handler } from "./bot-server.js";

export const TOKEN = "123456:AAH-secret_TokenValue-xyz";

const open: { close(): Promise<void> }[] = [];
afterEach(async () => {
  for (const resource of open.splice(0).reverse()) await resource.close();
});

/** A server and a client on it; both closed after the test. */
export async function connect(
  handler?: Handler,
  options: Partial<TelegramClientOptions> & { clock?: Clock } = {},
) {
  const server = await BotServer.start(handler);
  const client = new TelegramClient({
    token: TOKEN,
    apiRoot: server.url,
    ...options,
    outbox: {
      privateChatRps: 0,
      groupChatRps: 0,
      globalRps: 0,
      retryBaseDelayMs: 0,
      ...options.outbox,
    },
  });
  open.push(server, {
    close: async () => {
      let closed = false;
      const closing = client.close({ drain: false, timeoutMs: 0 }).then(() => {
        closed = true;
      });
      // A manual clock only reaches the close deadline when moved.
      while (!closed && options.clock instanceof ManualClock) {
        await options.clock.advance(0);
        await new Promise((resolve) => setTimeout(resolve, 1));
      }
      await closing;
    },
  });
  return { server, client };
}
