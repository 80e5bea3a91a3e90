// Settling an op: its one outcome resolved (or its abort rejected) exactly once, with the
// counters, the diagnostics events and the log line that outcome calls for.

import { type Logger, safeLog } from "@telepace/core";
import { publish } from "./events.js";
import type { Entry } from "./lane.js";
import type { MutableCounters } from "./outbox-snapshot.js";
import type { OutboxFailed, OutboxOutcome } from "./outcome.js";

/** How a failure is named in logs and events: its `code`, else its `name`; never its message. */
export function errorLabel(error: unknown): string | undefined {
  if (typeof error !== "object" || error === null) return undefined;
  const { code, name } = error as { code?: unknown; name?: unknown };
  if (typeof code === "string") return code;
  return typeof name === "string" ? name : undefined;
}

/** A `failed` outcome. */
export function failedOutcome(
  error: unknown,
  attempts: number,
  maybeDelivered: boolean,
): OutboxFailed {
  return { status: "failed", error, attempts, maybeDelivered };
}

/** A `closed` outcome, frozen. */
export const closedOutcome = (attempts: number): OutboxOutcome<unknown> =>
  Object.freeze({ status: "closed" as const, attempts });

/** Settles entries against the outbox's counters and logger. */
export class Settlement {
  readonly #counters: MutableCounters;
  readonly #logger: Logger;

  constructor(counters: MutableCounters, logger: Logger) {
    this.#counters = counters;
    this.#logger = logger;
  }

  /** Resolves the entry with `outcome`; a no-op when it already settled. */
  settle(entry: Entry, outcome: OutboxOutcome<unknown>): void {
    if (entry.state === "settled") return;
    entry.state = "settled";
    entry.unsubscribe();
    const counters = this.#counters;
    let error: unknown;
    switch (outcome.status) {
      case "delivered":
        counters.delivered++;
        if (outcome.notModified) counters.notModified++;
        break;
      case "superseded":
        counters.superseded++;
        publish("superseded", () => ({
          type: "superseded",
          key: entry.key,
          chat: entry.lane.chatKey,
          reason: outcome.reason,
        }));
        break;
      case "failed":
        counters.failed++;
        error = outcome.error;
        safeLog(
          this.#logger,
          "warn",
          {
            chat: entry.lane.chatKey,
            key: entry.key,
            attempts: outcome.attempts,
            error: errorLabel(error),
            maybeDelivered: outcome.maybeDelivered,
          },
          "op failed",
        );
        break;
      case "closed":
        counters.closed++;
        break;
      case "rejected":
        counters.rejected++;
        break;
    }
    publish("settled", () => ({
      type: "settled",
      key: entry.key,
      chat: entry.lane.chatKey,
      status: outcome.status,
      attempts: entry.attempts,
      error: errorLabel(error),
    }));
    entry.deferred.resolve(Object.freeze(outcome));
  }

  /**
   * Rejects the entry's promise with the caller's abort reason; the caller has already taken it
   * out of its lane (or aborted its request). A no-op when it already settled.
   */
  abort(entry: Entry, reason: unknown): void {
    if (entry.state === "settled") return;
    entry.state = "settled";
    entry.unsubscribe();
    this.#counters.aborted++;
    publish("settled", () => ({
      type: "settled",
      key: entry.key,
      chat: entry.lane.chatKey,
      status: "aborted",
      attempts: entry.attempts,
      error: undefined,
    }));
    entry.deferred.reject(reason);
  }
}
