// The broadcast comparison's sizes and Telegram's broadcast limits, and the ideal time those
// limits allow: what every run of the area is measured against.

/** Sizes and timing of the broadcast comparison. */
export interface BroadcastConfig {
  /** Recipients of the headline paid telepace run. */
  readonly recipients: number;
  /** Recipients of the headline free telepace run. */
  readonly headlineFreeRecipients: number;
  /** Recipients of each round's free and paid run (every contender). */
  readonly roundFreeRecipients: number;
  readonly roundPaidRecipients: number;
  readonly rounds: number;
  /** Recipients of the paid run of each contender before the rounds (not reported). */
  readonly warmUpRecipients: number;
  /**
   * A run still going at this multiple of recipients ÷ the documented pace is stopped (every
   * contender alike), and so is one that could no longer reach everyone by then.
   */
  readonly deadlineVsIdeal: number;
  /** How many times faster than real time the free broadcasts' sim (and telepace's clock) run. */
  readonly freeScale: number;
  /** The same for the headline free run (telepace alone). */
  readonly headlineFreeScale: number;
  /** People chatting with the bot during a free broadcast to `chatRecipients`. */
  readonly chatters: number;
  readonly chatRecipients: number;
  /** Recipients of the paid broadcast that the bot may not send paid (the fallback). */
  readonly refusedRecipients: number;
  /** Recipients of the crash runs (paid, real time). */
  readonly crashRecipients: number;
  /** Processes of the Redis crash run. */
  readonly processes: number;
  readonly seed: number;
}

/** The configuration `pnpm bench:broadcast` uses (TELEPACE_BROADCAST_RECIPIENTS shrinks it). */
export function broadcastConfig(): BroadcastConfig {
  const recipients = Number(process.env.TELEPACE_BROADCAST_RECIPIENTS ?? 10_000);
  return {
    recipients,
    headlineFreeRecipients: recipients,
    roundFreeRecipients: Math.min(300, recipients),
    roundPaidRecipients: Math.min(2_000, recipients),
    rounds: 5,
    warmUpRecipients: Math.min(200, recipients),
    deadlineVsIdeal: 1.25,
    freeScale: 5,
    headlineFreeScale: 5,
    chatters: 20,
    chatRecipients: Math.min(600, recipients),
    refusedRecipients: Math.min(300, recipients),
    crashRecipients: Math.min(2_000, recipients),
    processes: 3,
    seed: 28,
  };
}

/** A documented pace: `burst` messages at once, then `perSecond`. */
export interface Pace {
  readonly perSecond: number;
  readonly burst: number;
}

/** Telegram's pace and burst: 30/s after 30 at once; paid 1000/s after 1000 at once. */
export const FREE: Pace = { perSecond: 30, burst: 30 };
export const PAID: Pace = { perSecond: 1000, burst: 1000 };

/**
 * The fastest any sender reaches `recipients` under the limits: the burst at once, the rest at
 * the pace (the last message of a free 10 000 at (10 000 − 30)/30 s).
 */
export function idealMs(recipients: number, pace: Pace): number {
  return (Math.max(0, recipients - pace.burst) / pace.perSecond) * 1000;
}
