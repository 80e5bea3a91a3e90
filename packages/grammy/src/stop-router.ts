// Stop presses routed as soon as they arrive — in the getUpdates answer the transformer sees, or
// at the webhook entry — so a stream stops even while the handler awaiting it holds that chat's
// later updates behind itself (bot.start(), a runner with sequentialize, per-chat order).

import type { StreamRegistry } from "@telepace/outbox";
import type { Update } from "grammy/types";

// Ids of Stop presses routed on arrival that the middleware has not seen yet: a few at a time
// in practice; the bound only keeps a bot whose middleware never sees them from growing it.
const MAX_REMEMBERED = 1024;

/** Routes `stopped_message_generation` updates to their streams, once each. */
export class StopRouter {
  readonly #streams: StreamRegistry;
  readonly #routed = new Set<number>();

  constructor(streams: StreamRegistry) {
    this.#streams = streams;
  }

  /** Routes every Stop press among `updates` (a getUpdates result) now. */
  routeAll(updates: unknown): void {
    if (!Array.isArray(updates)) return;
    for (const update of updates) this.routeOnArrival(update as Update);
  }

  /** Routes `update` if it stops one of the streams; remembered for {@link StopRouter.consume}. */
  routeOnArrival(update: Update): boolean {
    if (typeof update?.update_id !== "number" || !this.#streams.handleUpdate(update)) return false;
    this.#routed.add(update.update_id);
    if (this.#routed.size > MAX_REMEMBERED) {
      this.#routed.delete(this.#routed.values().next().value as number);
    }
    return true;
  }

  /** The middleware's question: is `update` a Stop press for a stream (routed on arrival or now)? */
  consume(update: Update): boolean {
    if (this.#routed.delete(update.update_id)) return true;
    return this.#streams.handleUpdate(update);
  }
}
