// The error family of @telepace/media-scheduler: one base class with a stable `code`.

import { brandErrors } from "@telepace/core";

/**
 * Stable codes of {@link MediaSchedulerError}.
 *
 * - `ERR_TRANSFER_CLOSED`: the transfer was closed (by `transfer.close()` or `registry.close()`)
 *   before the acquire was granted, or an acquire/rebind was attempted on a closed transfer.
 * - `ERR_REGISTRY_CLOSED`: `registry.open()` or `registry.configure()` after `registry.close()`.
 * - `ERR_QUEUE_FULL`: the registry already holds `maxQueuedAcquires` waiting acquires.
 * - `ERR_CLOSE_TIMEOUT`: `registry.close({ timeoutMs })` ran out of time with permits still live.
 */
export type MediaSchedulerErrorCode =
  | "ERR_TRANSFER_CLOSED"
  | "ERR_REGISTRY_CLOSED"
  | "ERR_QUEUE_FULL"
  | "ERR_CLOSE_TIMEOUT";

/**
 * Base class of every error @telepace/media-scheduler creates. Match on `code`, never on
 * `message`. Invalid arguments are not of this class: they throw `TypeError`/`RangeError`.
 */
export class MediaSchedulerError extends Error {
  /** Stable machine-readable code. */
  readonly code: MediaSchedulerErrorCode;

  constructor(code: MediaSchedulerErrorCode, message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = "MediaSchedulerError";
    this.code = code;
  }
}

// `instanceof` by brand: it holds for an error from another installed copy of this package.
brandErrors("@telepace/media-scheduler", { MediaSchedulerError });
