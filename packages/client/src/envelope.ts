// The Bot API response envelope: `{ ok: true, result }` or `{ ok: false, error_code, description,
// parameters }`, mapped to a result or to the typed error a caller can act on.

import type { ResponseParameters } from "@grammyjs/types";
import {
  ChatMigratedError,
  ForbiddenError,
  NetworkError,
  outboxDefaults,
  RetryAfterError,
  retryAfterSecondsToMs,
  TelegramApiError,
  type TelegramApiErrorDetails,
} from "@telepace/outbox";

/** Response headers as undici returns them. */
export type ResponseHeaders = Record<string, string | string[] | undefined>;

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null;
}

/** `Retry-After` in seconds (Telegram sends it with every 429); HTTP dates are not used. */
function retryAfterHeaderMs(headers: ResponseHeaders): number | undefined {
  const raw = headers["retry-after"];
  const value = Array.isArray(raw) ? raw[0] : raw;
  if (value === undefined || !/^\s*\d+(\.\d+)?\s*$/.test(value)) return undefined;
  return Number(value) * 1000;
}

function retryAfterMsOf(parameters: ResponseParameters, headers: ResponseHeaders): number {
  return (
    retryAfterSecondsToMs(parameters.retry_after) ??
    retryAfterHeaderMs(headers) ??
    outboxDefaults.defaultRetryAfterMs
  );
}

/**
 * Turns a response into its result, or throws: {@link RetryAfterError} for a 429 (from the body,
 * else the `Retry-After` header, else 5 s), {@link ChatMigratedError}, {@link ForbiddenError},
 * {@link TelegramApiError}, or a {@link NetworkError} (`bad-response`) when the body is not an
 * envelope.
 */
export function parseEnvelope(
  method: string,
  statusCode: number,
  headers: ResponseHeaders,
  text: string,
): unknown {
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch {
    data = undefined;
  }
  if (isObject(data) && typeof data.ok === "boolean") {
    if (data.ok) return data.result;
    const parameters: ResponseParameters = isObject(data.parameters) ? data.parameters : {};
    const details: TelegramApiErrorDetails = {
      method,
      errorCode: typeof data.error_code === "number" ? data.error_code : statusCode,
      description: typeof data.description === "string" ? data.description : `HTTP ${statusCode}`,
      parameters,
    };
    if (details.errorCode === 429 || statusCode === 429) {
      return throwing(
        new RetryAfterError(retryAfterMsOf(parameters, headers), {
          method,
          description: details.description,
        }),
      );
    }
    if (typeof parameters.migrate_to_chat_id === "number") {
      return throwing(new ChatMigratedError(details, parameters.migrate_to_chat_id));
    }
    if (details.errorCode === 403) return throwing(new ForbiddenError(details));
    return throwing(new TelegramApiError(details));
  }
  if (statusCode === 429) {
    return throwing(new RetryAfterError(retryAfterMsOf({}, headers), { method }));
  }
  return throwing(
    new NetworkError(`${method}: HTTP ${statusCode} answered without a Bot API envelope`, {
      method,
      failure: "bad-response",
      mayHaveReachedServer: true,
      statusCode,
    }),
  );
}

function throwing(error: Error): never {
  throw error;
}
