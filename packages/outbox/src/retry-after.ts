// Recognising a 429 from any transport: our RetryAfterError, a Bot API error envelope, or an error
// object shaped like one (grammY's GrammyError), so a foreign transport plugs into the outbox.

import { outboxDefaults } from "./defaults.js";
import { RetryAfterError } from "./errors.js";

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null;
}

/**
 * A `retry_after` in milliseconds, parsed strictly: a finite number of seconds >= 0 (Telegram
 * sends an integer); anything else (negative, `NaN`, a string, missing) is `undefined`, and the
 * caller falls back to `outboxDefaults.defaultRetryAfterMs`. The client's reads and writes and
 * {@link retryAfterFrom} all parse it here, so they agree.
 */
export function retryAfterSecondsToMs(seconds: unknown): number | undefined {
  return typeof seconds === "number" && Number.isFinite(seconds) && seconds >= 0
    ? Math.ceil(seconds * 1000)
    : undefined;
}

/**
 * Maps a 429 in any of its shapes to a {@link RetryAfterError}; returns `undefined` for anything
 * else. Recognised: a `RetryAfterError`; a Bot API envelope `{ ok: false, error_code: 429,
 * parameters: { retry_after } }`; an error with `error_code: 429` and `parameters` (grammY's
 * `GrammyError`). A missing or invalid `retry_after` (see {@link retryAfterSecondsToMs}) means
 * `outboxDefaults.defaultRetryAfterMs` (5 s).
 *
 * @example
 * // A grammY API transformer under the outbox:
 * execute: async (signal) => {
 *   const response = await prev(method, payload, signal);
 *   const rateLimited = retryAfterFrom(response);
 *   if (rateLimited) throw rateLimited;
 *   return response;
 * }
 */
export function retryAfterFrom(value: unknown): RetryAfterError | undefined {
  if (value instanceof RetryAfterError) return value;
  if (!isObject(value) || value.error_code !== 429) return undefined;
  const parameters = isObject(value.parameters) ? value.parameters : {};
  const retryAfterMs =
    retryAfterSecondsToMs(parameters.retry_after) ?? outboxDefaults.defaultRetryAfterMs;
  return new RetryAfterError(retryAfterMs, {
    method: typeof value.method === "string" ? value.method : undefined,
    description: typeof value.description === "string" ? value.description : undefined,
    cause: value instanceof Error ? value : undefined,
  });
}
