// The error family of @telepace/update-dispatch: one base class with a stable `code`.

import { brandErrors } from "@telepace/core";

/** Stable codes of {@link UpdateDispatchError}. */
export type UpdateDispatchErrorCode =
  | "ERR_UPDATE_TIMEOUT"
  | "ERR_DISPATCHER_CLOSED"
  | "ERR_POLLING_CONFLICT"
  | "ERR_POLLING_UNAUTHORIZED"
  | "ERR_POLLING_JOURNAL_FAILED"
  | "ERR_INTAKE_RUNNING"
  | "ERR_INTAKE_CLOSED"
  | "ERR_JOURNAL_CLOSED"
  | "ERR_JOURNAL_UNFINISHED";

/**
 * Base class of every error @telepace/update-dispatch creates. Match on `code`, never on `message`.
 *
 * The dispatcher never throws these at its caller: `ERR_UPDATE_TIMEOUT` and
 * `ERR_DISPATCHER_CLOSED` are the `reason` of the `AbortSignal` a processor receives, so the
 * processor can tell a per-update timeout from the end of the close grace period. The intake
 * rejects `run()` with a {@link PollingStoppedError} when polling cannot go on, with
 * `ERR_POLLING_JOURNAL_FAILED` when storing a fetched batch failed and its `journalFailure` is
 * `"reject"` (`cause`: the journal's error), and with `ERR_INTAKE_RUNNING` / `ERR_INTAKE_CLOSED`
 * when it is already polling or closed; a closed
 * {@link MemoryUpdateJournal} rejects with `ERR_JOURNAL_CLOSED`, and its `restartIds()` with
 * `ERR_JOURNAL_UNFINISHED` while a stored update is unfinished.
 */
export class UpdateDispatchError extends Error {
  /** Stable machine-readable code. */
  readonly code: UpdateDispatchErrorCode;

  /** @param code - the stable code. @param message - human-readable, never parsed. */
  constructor(code: UpdateDispatchErrorCode, message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = "UpdateDispatchError";
    this.code = code;
  }
}

/**
 * `getUpdates` failed in a way retrying cannot fix: `ERR_POLLING_CONFLICT` (409: another process
 * polls with this token, or a webhook is set — `deleteWebhook` removes it) or
 * `ERR_POLLING_UNAUTHORIZED` (401/404: the token was rejected). `cause` is the error `getUpdates`
 * threw.
 */
export class PollingStoppedError extends UpdateDispatchError {
  declare readonly code: "ERR_POLLING_CONFLICT" | "ERR_POLLING_UNAUTHORIZED";
  /** Telegram's `error_code`: 409, 401 or 404. */
  readonly errorCode: number;

  /** @param errorCode - 409, 401 or 404. @param options - `cause`: what getUpdates threw. */
  constructor(errorCode: number, options?: ErrorOptions) {
    const isConflict = errorCode === 409;
    super(
      isConflict ? "ERR_POLLING_CONFLICT" : "ERR_POLLING_UNAUTHORIZED",
      isConflict
        ? "getUpdates answered 409 Conflict: another process polls with this bot token, or a webhook is set (deleteWebhook removes it)"
        : `getUpdates answered ${errorCode}: the bot token was rejected`,
      options,
    );
    this.name = "PollingStoppedError";
    this.errorCode = errorCode;
  }
}

// `instanceof` by brand: it holds for an error from another installed copy of this package.
brandErrors("@telepace/update-dispatch", { UpdateDispatchError, PollingStoppedError });
