// A Bot API error as it travels on the wire: the `{ ok: false, error_code, description,
// parameters }` envelope, thrown by method handlers and turned into the HTTP response.

import type { ResponseParameters } from "@grammyjs/types";

/**
 * A failed Bot API call. Handlers throw it; the server answers with HTTP status `errorCode` and
 * the Telegram envelope. Internal: the control API throws {@link BotApiSimError} instead.
 */
export class ApiFailure extends Error {
  readonly errorCode: number;
  readonly description: string;
  readonly parameters: ResponseParameters | undefined;
  /** Whole seconds for the `Retry-After` header, when the envelope carries `retry_after`. */
  readonly retryAfterHeader: number | undefined;

  constructor(errorCode: number, description: string, parameters?: ResponseParameters) {
    super(description);
    this.name = "ApiFailure";
    this.errorCode = errorCode;
    this.description = description;
    this.parameters = parameters;
    this.retryAfterHeader =
      parameters?.retry_after === undefined ? undefined : Math.ceil(parameters.retry_after);
  }
}

/** 400 with Telegram's "Bad Request: " prefix. */
export function badRequest(text: string, parameters?: ResponseParameters): ApiFailure {
  return new ApiFailure(400, `Bad Request: ${text}`, parameters);
}

/** 403 with Telegram's "Forbidden: " prefix. */
export function forbidden(text: string): ApiFailure {
  return new ApiFailure(403, `Forbidden: ${text}`);
}

/**
 * 429 as the real server words it. `retryAfter` is in seconds and may be fractional when the
 * simulator runs time-scaled; the `Retry-After` header is always the whole seconds above it.
 */
export function tooManyRequests(retryAfter: number): ApiFailure {
  return new ApiFailure(429, `Too Many Requests: retry after ${retryAfter}`, {
    retry_after: retryAfter,
  });
}

/** 409 Conflict with the given text after the prefix. */
export function conflict(text: string): ApiFailure {
  return new ApiFailure(409, `Conflict: ${text}`);
}

/** The standard reason phrase used as description for an injected or generic error code. */
export function defaultDescription(code: number): string {
  switch (code) {
    case 400:
      return "Bad Request";
    case 401:
      return "Unauthorized";
    case 403:
      return "Forbidden";
    case 404:
      return "Not Found";
    case 409:
      return "Conflict";
    case 413:
      return "Request Entity Too Large";
    case 420:
      return "Flood";
    case 429:
      return "Too Many Requests";
    case 500:
      return "Internal Server Error";
    case 501:
      return "Not Implemented";
    case 502:
      return "Bad Gateway";
    case 503:
      return "Service Unavailable";
    case 504:
      return "Gateway Timeout";
    default:
      return code >= 500 ? "Internal Server Error" : "Bad Request";
  }
}
