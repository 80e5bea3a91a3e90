// The error family of @telepace/journal-file: one base class with a stable `code`.

import { brandErrors } from "@telepace/core";

/** Stable codes of {@link JournalError}. */
export type JournalErrorCode =
  | "ERR_JOURNAL_CLOSED"
  | "ERR_JOURNAL_LOCKED"
  | "ERR_JOURNAL_CORRUPT"
  | "ERR_JOURNAL_IO"
  | "ERR_JOURNAL_FAILED"
  | "ERR_JOURNAL_UNFINISHED";

/**
 * Base class of every error @telepace/journal-file creates. Match on `code`, never on `message`.
 *
 * - `ERR_JOURNAL_CLOSED`: a method was called after `close()`.
 * - `ERR_JOURNAL_LOCKED`: another live process (or this one) has the directory open.
 * - `ERR_JOURNAL_CORRUPT`: the log is damaged somewhere other than its unsynced tail.
 * - `ERR_JOURNAL_IO`: the file system failed; `cause` is the system error.
 * - `ERR_JOURNAL_FAILED`: a write or sync failed and the journal has not resumed yet (it does
 *   by itself once the file system writes again); `cause` is the latest `ERR_JOURNAL_IO`.
 * - `ERR_JOURNAL_UNFINISHED`: `restartIds()` was called while a stored update is unfinished.
 */
export class JournalError extends Error {
  /** Stable machine-readable code. */
  readonly code: JournalErrorCode;

  /** @param code - the stable code. @param message - human-readable, never parsed. */
  constructor(code: JournalErrorCode, message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = "JournalError";
    this.code = code;
  }
}

// `instanceof` by brand: it holds for an error from another installed copy of this package.
brandErrors("@telepace/journal-file", { JournalError });

/** Wraps a system error from `node:fs` as `ERR_JOURNAL_IO`, keeping it as `cause`. */
export function ioError(doing: string, cause: unknown): JournalError {
  const code = (cause as { code?: unknown } | null)?.code;
  const suffix = typeof code === "string" ? ` (${code})` : "";
  return new JournalError("ERR_JOURNAL_IO", `Could not ${doing}${suffix}`, { cause });
}
