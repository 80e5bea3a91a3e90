// What the end of a processor run leaves behind: its outcome counted, a fixed log line for the
// bad ones, its id settled (or held) in the ledger, the intake's finished hook, and the `finished`
// event for whoever listens.

import { type Clock, type Logger, type LogLevel, safeLog } from "@telepace/core";
import { channels } from "./diagnostics.js";
import type { PrincipalId } from "./dispatch-key.js";
import type { Entry } from "./entry.js";
import type { ProcessOutcome, RejectReason } from "./results.js";
import type { IdLedger } from "./update-ledger.js";

/** Fixed log text: the error and the update are never formatted into a log line. */
export const LOG = Object.freeze({
  failed: "Telegram update failed locally; later work will continue",
  threw: "Telegram update processor threw synchronously; later work will continue",
  timedOut: "Telegram update timed out; its signal was aborted and later work will continue",
  interrupted: "Telegram update was interrupted by close; its signal was aborted",
  late: "Telegram update settled after the dispatcher gave up on it; the result was ignored",
  rejected: "Telegram update was not accepted for dispatch",
});

/** How an update's processing ended for good: every outcome but `interrupted` (by `close()`). */
export type FinishedOutcome = Exclude<ProcessOutcome, "interrupted">;

/**
 * Told once per update with an integer `update_id` whose processing ended for good, with the
 * principal it ran for.
 */
export type FinishedHook = (updateId: number, outcome: FinishedOutcome, keyId: PrincipalId) => void;

/** Logs one line with fixed text and the safe fields: the update id, and a rejection's reason. */
export function logUpdate(
  logger: Logger,
  level: LogLevel,
  updateId: number | undefined,
  message: string,
  reason?: RejectReason,
): void {
  const fields =
    reason === undefined ? { updateId: updateId ?? null } : { updateId: updateId ?? null, reason };
  safeLog(logger, level, fields, message);
}

/** The outcome counters of a dispatcher and what each ended run records. */
export class RunOutcomes {
  /** Where ids settle or are held (the dispatcher's, swapped for the intake's; see there). */
  ledger: IdLedger;
  readonly #logger: Logger;
  readonly #clock: Clock;
  /** The intake's hook, when the dispatcher is an intake's (see `dispatcher-access.ts`). */
  onFinished: FinishedHook | undefined;
  succeeded = 0;
  failed = 0;
  timedOut = 0;
  interrupted = 0;

  constructor(ledger: IdLedger, logger: Logger, clock: Clock) {
    this.ledger = ledger;
    this.#logger = logger;
    this.#clock = clock;
  }

  /** A run of `entry`, started at `startedAt` (NaN: untimed), ended with `outcome`. */
  record(entry: Entry, startedAt: number, outcome: ProcessOutcome): void {
    const { updateId } = entry;
    switch (outcome) {
      case "succeeded":
        this.succeeded++;
        break;
      case "failed":
        this.failed++;
        logUpdate(this.#logger, "warn", updateId, LOG.failed);
        break;
      case "threw":
        this.failed++;
        logUpdate(this.#logger, "error", updateId, LOG.threw);
        break;
      case "timed-out":
        this.timedOut++;
        logUpdate(this.#logger, "warn", updateId, LOG.timedOut);
        break;
      case "interrupted":
        this.interrupted++;
        logUpdate(this.#logger, "warn", updateId, LOG.interrupted);
        break;
    }
    if (updateId !== undefined) {
      if (outcome === "interrupted") {
        this.ledger.hold(updateId);
      } else {
        this.ledger.finish(updateId);
        this.onFinished?.(updateId, outcome, entry.keyId);
      }
    }
    if (channels.finished.hasSubscribers && !Number.isNaN(startedAt)) {
      channels.finished.publish(
        Object.freeze({
          type: "finished",
          updateId: updateId ?? null,
          keyKind: entry.keyKind,
          outcome,
          durationMs: this.#clock.now() - startedAt,
        }),
      );
    }
  }
}
