// Under a loop that handles each getUpdates batch before it fetches the next (grammY's
// bot.start()), a Stop press would arrive only once the handler awaiting its stream is done.
// While a stream shows a Stop button and no getUpdates of the bot is out, this looks at what is
// waiting — with the offset the bot's last getUpdates used, so nothing new is confirmed — and
// routes the Stop presses at once. The bot's own next getUpdates waits for such a look to end,
// so the two never compete (Telegram answers 409 to overlapping polls).

import type { Clock, Timer } from "@telepace/core";
import type { StreamRegistry } from "@telepace/outbox";
import type { Envelope } from "./outcome-response.js";
import type { StopRouter } from "./stop-router.js";

type Prev = (
  method: string,
  payload: Record<string, unknown>,
  signal?: unknown,
) => Promise<Envelope>;

/** How often to look for a Stop press while a stoppable stream runs and the bot is not polling. */
export const STOP_LOOK_INTERVAL_MS = 500;

function updateIdsOf(result: unknown): number[] {
  if (!Array.isArray(result)) return [];
  return result.flatMap((update) => {
    const id = (update as { update_id?: unknown } | null)?.update_id;
    return typeof id === "number" ? [id] : [];
  });
}

/** The bot's getUpdates through the transformer, and the looks between them. */
export class StopPoller {
  readonly #stops: StopRouter;
  readonly #streams: StreamRegistry;
  readonly #clock: Clock;
  /** The API below the transformer and the offset of the bot's last getUpdates. */
  #last: { readonly prev: Prev; readonly offset: unknown } | undefined;
  #highestSeen = Number.NEGATIVE_INFINITY;
  #polling = 0;
  #looking: Promise<void> | undefined;
  #timer: Timer | undefined;

  constructor(stops: StopRouter, streams: StreamRegistry, clock: Clock) {
    this.#stops = stops;
    this.#streams = streams;
    this.#clock = clock;
  }

  /** A getUpdates of the bot: made after any look under way, its Stop presses routed. */
  async getUpdates(prev: Prev, payload: Record<string, unknown>, signal: unknown) {
    this.#polling++;
    try {
      await this.#looking;
      const response = await prev("getUpdates", payload, signal);
      if (response.ok) {
        this.#last = { prev, offset: payload.offset };
        this.#saw(response.result);
        this.#stops.routeAll(response.result);
      }
      return response;
    } finally {
      this.#polling--;
      this.wake();
    }
  }

  /** A stream made a request: look now and then while one shows a Stop button. */
  wake(): void {
    if (this.#timer !== undefined || this.#last === undefined) return;
    if (this.#streams.snapshot().stoppable === 0) return;
    this.#timer = this.#clock.setTimer(() => {
      this.#timer = undefined;
      void this.#look();
    }, STOP_LOOK_INTERVAL_MS);
  }

  #saw(result: unknown): void {
    for (const id of updateIdsOf(result)) this.#highestSeen = Math.max(this.#highestSeen, id);
  }

  async #look(): Promise<void> {
    const last = this.#last;
    if (last === undefined || this.#polling > 0 || this.#looking !== undefined) return;
    if (this.#streams.snapshot().stoppable === 0) return;
    const seenBefore = this.#highestSeen;
    this.#looking = (async () => {
      try {
        const payload = {
          ...(last.offset === undefined ? {} : { offset: last.offset }),
          limit: 100,
        };
        const response = await last.prev("getUpdates", { ...payload, timeout: 0 });
        if (!response.ok || !Array.isArray(response.result)) return;
        // Only what the bot has not fetched yet: the rest it has already handled or is handling.
        const fresh = response.result.filter(
          (update) => (update as { update_id: number }).update_id > seenBefore,
        );
        this.#stops.routeAll(fresh);
      } catch {
        // A look is a courtesy: the bot's own next getUpdates brings the press all the same.
      } finally {
        this.#looking = undefined;
        this.wake();
      }
    })();
    await this.#looking;
  }
}
