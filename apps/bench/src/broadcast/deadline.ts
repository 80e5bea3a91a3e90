// When a broadcast run stops: at its deadline, or as soon as the deadline is out of reach — when
// even the documented limits' fastest (the burst again, then the pace) could not settle the rest
// by then, so the run would be cut there anyway and only its pace so far is left to measure.

import { idealMs, type Pace } from "./config.js";

/** One run's deadline, every contender alike. */
export class RunDeadline {
  /** Telegram ms after the run's start; `Infinity`: none. */
  readonly deadlineMs: number;
  readonly #recipients: number;
  readonly #pace: Pace;

  constructor(deadlineMs: number, recipients: number, pace: Pace) {
    if (!(deadlineMs >= 0)) {
      throw new RangeError(`Expected \`deadlineMs\` to be a number >= 0, got ${deadlineMs}`);
    }
    if (!(Number.isInteger(recipients) && recipients >= 0)) {
      throw new RangeError(`Expected \`recipients\` to be an integer >= 0, got ${recipients}`);
    }
    this.deadlineMs = deadlineMs;
    this.#recipients = recipients;
    this.#pace = pace;
  }

  /**
   * Whether a run `elapsedMs` (Telegram ms) after its start, with `settled` recipients given an
   * outcome, should stop: it is past the deadline, or the rest could not all be sent by then at
   * the limits' fastest. Never true once every recipient is settled, nor without a deadline.
   */
  isOver(elapsedMs: number, settled: number): boolean {
    const remaining = this.#recipients - settled;
    if (remaining <= 0 || this.deadlineMs === Number.POSITIVE_INFINITY) return false;
    return elapsedMs + idealMs(remaining, this.#pace) > this.deadlineMs;
  }
}
