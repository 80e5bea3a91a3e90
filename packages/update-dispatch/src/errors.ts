// The error family of @telepace/update-dispatch: one base class with a stable `code`.

/** Stable codes of {@link UpdateDispatchError}. */
export type UpdateDispatchErrorCode = "ERR_UPDATE_TIMEOUT" | "ERR_DISPATCHER_CLOSED";

/**
 * Base class of every error @telepace/update-dispatch creates. Match on `code`, never on `message`.
 *
 * The dispatcher never throws these at its caller: they are the `reason` of the `AbortSignal` a
 * processor receives, so the processor can tell a per-update timeout (`ERR_UPDATE_TIMEOUT`) from
 * the end of the close grace period (`ERR_DISPATCHER_CLOSED`).
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
