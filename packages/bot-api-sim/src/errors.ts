// The error family of @telepace/bot-api-sim: what the control API throws when a test asks for
// something the simulated world cannot do. Wire errors to the bot are envelopes, not these.

import { brandErrors } from "@telepace/core";

/** Stable codes of {@link BotApiSimError}. */
export type BotApiSimErrorCode =
  | "ERR_SIM_CLOSED"
  | "ERR_LISTEN_FAILED"
  | "ERR_UNKNOWN_BOT"
  | "ERR_UNKNOWN_USER"
  | "ERR_UNKNOWN_CHAT"
  | "ERR_AMBIGUOUS_CHAT"
  | "ERR_NOT_A_MEMBER"
  | "ERR_UNKNOWN_MESSAGE"
  | "ERR_NO_SUCH_BUTTON"
  | "ERR_INVALID_STATE"
  | "ERR_CAPACITY"
  | "ERR_UPDATE_QUEUE_FULL"
  | "ERR_STORAGE_FULL"
  | "ERR_WAIT_TIMEOUT";

/**
 * Base class of every error the simulator's control API throws. Match on `code`, never on
 * `message`. Invalid option values throw plain `TypeError`/`RangeError` instead.
 */
export class BotApiSimError extends Error {
  /** Stable machine-readable code. */
  readonly code: BotApiSimErrorCode;

  constructor(code: BotApiSimErrorCode, message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = "BotApiSimError";
    this.code = code;
  }
}

// `instanceof` by brand: it holds for an error from another installed copy of this package.
brandErrors("@telepace/bot-api-sim", { BotApiSimError });
