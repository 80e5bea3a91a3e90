// The error family of @telepace/broadcast: one class with a stable `code` for everything a
// broadcast can refuse or run into that is not a recipient's own outcome.

import { brandErrors } from "@telepace/core";

/** Stable codes of {@link BroadcastError}. Match on these, never on `message`. */
export type BroadcastErrorCode =
  /** `start` of an id this registry is already running. */
  | "ERR_BROADCAST_RUNNING"
  /** `start` of an id whose stored broadcast has another message or batch size. */
  | "ERR_BROADCAST_CONFLICT"
  /** The registry was closed. */
  | "ERR_BROADCAST_CLOSED"
  /** So many sends in a row failed for a reason that is not the recipient's (a bad message, a revoked token) that the broadcast stopped. */
  | "ERR_BROADCAST_FAILING"
  /** A batch's lease passed to another process: this one no longer sends it. */
  | "ERR_BROADCAST_LEASE_LOST"
  /** Telegram answered a paid broadcast send with a 429: paid broadcasts are not enabled for the bot. */
  | "ERR_PAID_BROADCAST_REFUSED"
  /** The store holds something this version cannot read. */
  | "ERR_BROADCAST_CORRUPT";

/** Base class of every error @telepace/broadcast creates. */
export class BroadcastError extends Error {
  /** Stable machine-readable code. */
  readonly code: BroadcastErrorCode;

  constructor(code: BroadcastErrorCode, message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = "BroadcastError";
    this.code = code;
  }
}

brandErrors("@telepace/broadcast", { BroadcastError });
