// The small vocabularies every part of the scheduler shares: data centre, direction, priority and
// size class, with the argument checks that keep bad values (and secrets) out of the registry.

/** Which way the bytes flow. Uploads and downloads never share a budget. */
export type MediaDirection = "download" | "upload";

/**
 * Foreground requests are preferred; background requests still get every
 * `backgroundGrantInterval`-th grant while they wait (see the README's starvation bound).
 */
export type MediaPriority = "foreground" | "background";

/**
 * `large` when the transfer's size is at least `largeTransferThresholdBytes` or unknown;
 * `small` otherwise. Each class has its own cap on concurrently active transfers.
 */
export type MediaSizeClass = "small" | "large";

/**
 * A data centre: an MTProto DC id (a positive integer) or a host name such as
 * `"api.telegram.org"` for the Bot API. `2` and `"2"` are different data centres.
 */
export type MediaDc = number | string;

const MAX_DC_LENGTH = 255;

/** Validates a data centre; a string with a `/` is refused without echoing it (URLs carry tokens). */
export function checkDc(dc: unknown): MediaDc {
  if (typeof dc === "number") {
    if (Number.isSafeInteger(dc) && dc >= 1) return dc;
    throw new RangeError(`Expected \`dc\` to be an integer >= 1 or a host name, got ${dc}`);
  }
  if (typeof dc !== "string") {
    throw new TypeError(`Expected \`dc\` to be an integer >= 1 or a host name, got ${typeof dc}`);
  }
  if (dc.includes("/")) {
    // A URL such as https://api.telegram.org/file/bot<token>/… must never reach a snapshot or log.
    throw new RangeError(
      "Expected `dc` to be a host name without a path or URL (value not shown: it may contain a token)",
    );
  }
  if (dc.length === 0 || dc.length > MAX_DC_LENGTH || dc.trim() !== dc) {
    throw new RangeError(
      `Expected \`dc\` to be a non-empty host name of at most ${MAX_DC_LENGTH} characters without surrounding spaces, got ${JSON.stringify(dc.slice(0, 40))}`,
    );
  }
  return dc;
}

/** Validates a direction. */
export function checkDirection(direction: unknown): MediaDirection {
  if (direction === "download" || direction === "upload") return direction;
  throw new TypeError(
    `Expected \`direction\` to be "download" or "upload", got ${describe(direction)}`,
  );
}

/** Validates a priority. */
export function checkPriority(priority: unknown): MediaPriority {
  if (priority === "foreground" || priority === "background") return priority;
  throw new TypeError(
    `Expected \`priority\` to be "foreground" or "background", got ${describe(priority)}`,
  );
}

function describe(value: unknown): string {
  return typeof value === "string" ? JSON.stringify(value) : String(value);
}
