// What the bot tells its supervisor about its intake, the same in one process and in several: a
// batch getUpdates returned, and each update whose processing ended, with how it ended.

import type { Update } from "@grammyjs/types";
import type { TelegramClient } from "@telepace/client";
import type { GetUpdates } from "@telepace/update-dispatch";
import type { BotEventSink } from "./bot-events.js";
import type { UpdateRouter } from "./update-router.js";

/** Whether an update's signal aborted because it ran past its `timeoutMs`. */
function isTimeout(signal: AbortSignal): boolean {
  return (
    signal.aborted &&
    (signal.reason as { code?: unknown } | undefined)?.code === "ERR_UPDATE_TIMEOUT"
  );
}

/** The router as a processor that reports each update it ended (`update-handled`). */
export function reportedProcessor(
  router: Pick<UpdateRouter, "handle">,
  onEvent: BotEventSink,
): (update: Update, signal: AbortSignal) => Promise<void> {
  return async (update, signal) => {
    let outcome: "succeeded" | "failed" | "timed-out" = "failed";
    try {
      await router.handle(update, signal);
      outcome = "succeeded";
    } finally {
      if (isTimeout(signal)) outcome = "timed-out";
      onEvent({ type: "update-handled", updateId: update.update_id, outcome });
    }
  };
}

/** The client's getUpdates, reporting each batch it returns (`updates-fetched`). */
export function reportedGetUpdates(client: TelegramClient, onEvent: BotEventSink): GetUpdates {
  return async (params, options) => {
    const updates = await client.getUpdates(params, options);
    if (updates.length > 0) {
      onEvent({ type: "updates-fetched", updateIds: updates.map((update) => update.update_id) });
    }
    return updates;
  };
}
