// A shared link simulated by time, not by moving bytes: every request waits one round trip, then
// its response shares the link's bandwidth evenly with every other response in flight, as TCP
// flows share a bottleneck (processor sharing). Driven by a Clock, so under a ManualClock a run
// takes no CPU beyond the gates themselves and the link is a true ceiling.

import type { Clock, Timer } from "@telepace/core";
import { seededRandom } from "../random.js";

/** Options of {@link TimedLink}. */
export interface TimedLinkOptions {
  readonly clock: Clock;
  /** Bandwidth shared by every response in flight, bytes per second. */
  readonly bytesPerSecond: number;
  /** From sending a request to its first response byte, ms (the mean, with jitter). */
  readonly roundTripMs: number;
  /**
   * Each round trip is drawn uniformly from `roundTripMs × (1 ± roundTripJitter)`, seeded, so
   * responses started together do not move in lockstep. A fraction in [0, 1). @defaultValue 0
   */
  readonly roundTripJitter?: number;
  /** Seed of the jitter. @defaultValue 1 */
  readonly seed?: number;
}

interface Flow {
  readonly tag: number;
  remaining: number;
  readonly resolve: () => void;
}

/** Bytes below this count as delivered (floating-point residue of the sharing arithmetic). */
const EPSILON_BYTES = 1e-6;

export class TimedLink {
  readonly #clock: Clock;
  readonly #bytesPerMs: number;
  readonly #roundTripMs: number;
  readonly #jitter: number;
  readonly #random: () => number;
  readonly #flows = new Set<Flow>();
  readonly #delivered = new Map<number, number>();
  #lastUpdate = 0;
  #timer: Timer | undefined;
  #totalDelivered = 0;
  #busyMs = 0;

  constructor(options: TimedLinkOptions) {
    if (!(options.bytesPerSecond > 0)) {
      throw new RangeError(
        `Expected \`bytesPerSecond\` to be > 0, got ${String(options.bytesPerSecond)}`,
      );
    }
    if (!(options.roundTripMs >= 0)) {
      throw new RangeError(
        `Expected \`roundTripMs\` to be >= 0, got ${String(options.roundTripMs)}`,
      );
    }
    this.#clock = options.clock;
    this.#bytesPerMs = options.bytesPerSecond / 1000;
    this.#roundTripMs = options.roundTripMs;
    this.#jitter = options.roundTripJitter ?? 0;
    if (!(this.#jitter >= 0 && this.#jitter < 1)) {
      throw new RangeError(`Expected \`roundTripJitter\` to be in [0, 1), got ${this.#jitter}`);
    }
    this.#random = seededRandom(options.seed ?? 1);
    this.#lastUpdate = options.clock.now();
  }

  /** Bytes delivered so far, in total. */
  get deliveredBytes(): number {
    this.#advance();
    return this.#totalDelivered;
  }

  /** Milliseconds during which at least one response was moving. */
  get busyMs(): number {
    this.#advance();
    return this.#busyMs;
  }

  /** Bytes delivered so far to requests carrying `tag`. */
  deliveredTo(tag: number): number {
    this.#advance();
    return this.#delivered.get(tag) ?? 0;
  }

  /**
   * One request whose response is `bytes` long; resolves when its last byte arrives.
   * `onFirstByte` runs when the response starts to flow.
   */
  async fetch(bytes: number, tag: number, onFirstByte?: () => void): Promise<void> {
    const jitter = this.#jitter === 0 ? 0 : this.#jitter * (2 * this.#random() - 1);
    await this.#clock.sleep(this.#roundTripMs * (1 + jitter));
    onFirstByte?.();
    if (bytes <= 0) return;
    await new Promise<void>((resolve) => {
      this.#advance();
      this.#flows.add({ tag, remaining: bytes, resolve });
      this.#rearm();
    });
  }

  // Moves every flow forward to now at an equal share each, and finishes those that are done.
  #advance(): void {
    const now = this.#clock.now();
    const elapsed = now - this.#lastUpdate;
    this.#lastUpdate = now;
    if (elapsed <= 0 || this.#flows.size === 0) return;
    this.#busyMs += elapsed;
    const share = (elapsed * this.#bytesPerMs) / this.#flows.size;
    for (const flow of this.#flows) {
      const moved = Math.min(share, flow.remaining);
      flow.remaining -= moved;
      this.#totalDelivered += moved;
      this.#delivered.set(flow.tag, (this.#delivered.get(flow.tag) ?? 0) + moved);
      if (flow.remaining <= EPSILON_BYTES) {
        this.#flows.delete(flow);
        flow.resolve();
      }
    }
  }

  // One timer, at the next finish under the current sharing.
  #rearm(): void {
    this.#timer?.cancel();
    this.#timer = undefined;
    if (this.#flows.size === 0) return;
    let least = Number.POSITIVE_INFINITY;
    for (const flow of this.#flows) least = Math.min(least, flow.remaining);
    const delayMs = (least * this.#flows.size) / this.#bytesPerMs;
    this.#timer = this.#clock.setTimer(() => {
      this.#timer = undefined;
      this.#advance();
      this.#rearm();
    }, delayMs);
  }
}
