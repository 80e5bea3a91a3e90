// How fast one stream sends its drafts: the next as soon as the previous one is answered, at no
// more than one per floor on average; a 429 teaches it the pace the chat takes, failures back it
// off until a draft is answered again.

import type { Clock } from "@telepace/core";
import { retryAfterFrom } from "../retry-after.js";
import { streamDefaults } from "./stream-options.js";

/**
 * A draft pace learned from a 429 in a chat, which later streams into the chat start from (and,
 * as the registry's prior, streams into chats that taught no pace yet).
 */
export interface LearnedDraftPace {
  /** Ms between two drafts' starts that the chat took without a 429. */
  readonly spacingMs: number;
  /** When it was learned (the last 429), clock ms. */
  readonly atMs: number;
}

/** The drafts a 429 comes after are counted over this window: their number is the pace taught. */
const RATE_WINDOW_MS = 1_000;

/**
 * Drafts a stream may start in a row under its floor: the floor is a rate (one per `floorMs` on
 * average), so a draft answered a little sooner than the floor goes at once after one that was
 * answered later. Held per gap instead, a round trip near the floor waited on every frame.
 */
const FLOOR_BURST = 2;

/** A credit this close to a whole draft is one (the refill's division leaves such rests). */
const CREDIT_EPSILON = 1e-9;

/**
 * The spacing a learned pace asks for at `nowMs`: held for `learnedDraftPaceHoldMs` after its
 * 429, then halving once per that long.
 */
export function relaxedSpacingMs(pace: LearnedDraftPace, nowMs: number): number {
  const halvings = Math.floor((nowMs - pace.atMs) / streamDefaults.learnedDraftPaceHoldMs);
  return pace.spacingMs / 2 ** Math.max(0, halvings);
}

/** The pacing state of one stream's drafts. */
export class DraftPacer {
  readonly #floorMs: number;
  #learned: LearnedDraftPace | undefined;
  #lastStartMs = Number.NEGATIVE_INFINITY;
  #lastEndMs = Number.NEGATIVE_INFINITY;
  #failures = 0;
  /** Start times of the drafts answered within the last second, oldest first. */
  readonly #answeredAt: number[] = [];
  /** Drafts the floor allows now (a bucket of FLOOR_BURST, one more per floorMs). */
  #floorCredit = FLOOR_BURST;
  #creditAtMs = Number.NEGATIVE_INFINITY;

  constructor(floorMs: number, learned: LearnedDraftPace | undefined) {
    this.#floorMs = floorMs;
    this.#learned = learned;
  }

  /** The learned spacing at `nowMs` (see {@link relaxedSpacingMs}); 0 once below the floor. */
  #learnedSpacingMs(nowMs: number): number {
    const learned = this.#learned;
    if (learned === undefined) return 0;
    const spacingMs = relaxedSpacingMs(learned, nowMs);
    return spacingMs > this.#floorMs ? spacingMs : 0;
  }

  /**
   * Follows one attempt of a draft, starting now: answered, or a 429 (thrown or returned) that
   * teaches a pace, handed to `learned`. Resolves or rejects as `request` does.
   */
  track(
    clock: Clock,
    learned: (pace: LearnedDraftPace) => void,
    request: Promise<unknown>,
  ): Promise<unknown> {
    const startMs = clock.now();
    this.#lastStartMs = startMs;
    this.#floorCredit = this.#creditAt(startMs) - 1;
    this.#creditAtMs = startMs;
    const isRateLimited = (value: unknown): boolean => {
      if (retryAfterFrom(value) === undefined) return false;
      learned(this.#rateLimited(startMs, clock.now()));
      return true;
    };
    return request.then(
      (result) => {
        if (!isRateLimited(result)) this.#answered(startMs, clock.now());
        return result;
      },
      (error: unknown) => {
        isRateLimited(error);
        throw error;
      },
    );
  }

  #answered(startMs: number, nowMs: number): void {
    this.#failures = 0;
    this.#lastEndMs = nowMs;
    this.#answeredAt.push(startMs);
    while ((this.#answeredAt[0] as number) <= startMs - RATE_WINDOW_MS) this.#answeredAt.shift();
  }

  /**
   * The draft that started at `startMs` got a 429: the pace to keep is one draft fewer a second
   * than were answered in the second before it (a limit that allows a burst lets more through
   * than it sustains: 6 answered under 5 a second, burst 5, teach 5), or, when that is no slower
   * than the pace already kept, half the pace. Returns the pace learned, for later streams.
   */
  #rateLimited(startMs: number, nowMs: number): LearnedDraftPace {
    const count = this.#answeredAt.filter((at) => at > startMs - RATE_WINDOW_MS).length;
    const keptMs = Math.max(this.#floorMs, this.#learnedSpacingMs(nowMs));
    const taughtMs = RATE_WINDOW_MS / Math.max(1, count - 1);
    const spacingMs = Math.min(
      streamDefaults.maxLearnedDraftSpacingMs,
      taughtMs > keptMs ? taughtMs : Math.max(1, keptMs) * 2,
    );
    this.#learned = Object.freeze({ spacingMs, atMs: nowMs });
    this.#answeredAt.length = 0;
    return this.#learned;
  }

  /** A draft failed (other than a 429, which the outbox waits out): back off until one is answered. */
  failed(nowMs: number): void {
    this.#failures++;
    this.#lastEndMs = nowMs;
  }

  /** The floor's credit at `nowMs`. */
  #creditAt(nowMs: number): number {
    if (this.#floorMs <= 0) return FLOOR_BURST;
    const refilled = this.#floorCredit + (nowMs - this.#creditAtMs) / this.#floorMs;
    return Math.min(FLOOR_BURST, refilled);
  }

  /** Ms until the next draft may start; 0 when it may now. */
  waitMs(nowMs: number): number {
    // A learned pace spaces every draft from the one before; the floor only keeps the average.
    const learnedMs = this.#learnedSpacingMs(nowMs);
    const credit = this.#creditAt(nowMs);
    let at =
      learnedMs > 0
        ? this.#lastStartMs + learnedMs
        : nowMs + (credit >= 1 - CREDIT_EPSILON ? 0 : (1 - credit) * this.#floorMs);
    if (this.#failures > 0) {
      const backoffMs = Math.min(
        streamDefaults.maxDraftFailureBackoffMs,
        streamDefaults.draftFailureBackoffMs * 2 ** (this.#failures - 1),
      );
      at = Math.max(at, this.#lastEndMs + backoffMs);
    }
    return Math.max(0, at - nowMs);
  }
}
