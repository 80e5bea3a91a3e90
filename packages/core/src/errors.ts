// The error family of @telepace/core: one base class with a stable `code`.

import { brandErrors } from "./error-brand.js";

/** Stable codes of {@link CoreError}. */
export type CoreErrorCode = "ERR_SEMAPHORE_CLOSED";

/**
 * Base class of every error @telepace/core creates. Match on `code`, never on `message`.
 */
export class CoreError extends Error {
  /** Stable machine-readable code. */
  readonly code: CoreErrorCode;

  constructor(code: CoreErrorCode, message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = "CoreError";
    this.code = code;
  }
}

// `instanceof` by brand: it holds for an error from another installed copy of this package.
brandErrors("@telepace/core", { CoreError });
