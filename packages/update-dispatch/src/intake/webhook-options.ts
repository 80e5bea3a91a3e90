// The options of webhookHandler: the secret token Telegram sends, the body bound, the answers at
// the intake's bound, their defaults in one frozen object and their validation, checked whole.

import {
  type Clock,
  checkClock,
  checkLogger,
  checkOptionalNumber,
  checkOptions,
  describeValue,
  type Logger,
  systemClock,
} from "@telepace/core";

/** Options of {@link webhookHandler}. */
export interface WebhookHandlerOptions {
  /**
   * The `secret_token` given to `setWebhook`. When set, a request whose
   * `X-Telegram-Bot-Api-Secret-Token` header is missing or different is answered 401 before its
   * body is read (compared in constant time). 1–256 characters of `A-Z`, `a-z`, `0-9`, `_` and
   * `-`, as Telegram allows.
   * @defaultValue none: every request is taken (anyone who knows the URL can post updates)
   */
  readonly secretToken?: string | undefined;
  /**
   * The largest body read, in bytes; a larger one is answered 413 without reading the rest.
   * Telegram's largest updates are far below it: a 4096-character message with 100 entities and
   * a 100-button keyboard, replying to another such message, is about 104 KiB. Integer >= 1024.
   * @defaultValue 1_048_576 (1 MiB)
   */
  readonly maxBodyBytes?: number | undefined;
  /**
   * The `Retry-After` of a 503, in seconds: how long Telegram waits before it sends the update
   * again when the intake is at `maxUnfinished` or the journal was too slow. Integer 1–3600.
   * @defaultValue 1
   */
  readonly retryAfterSeconds?: number | undefined;
  /**
   * How long to wait for the journal to store an update before answering 503 (Telegram then
   * sends it again; if it was stored meanwhile, the retry is a duplicate and answered 200). Stay
   * below Telegram's 60 s wait for an answer. Integer 1–55000, in ms.
   * @defaultValue 10000
   */
  readonly timeoutMs?: number | undefined;
  /** Time source of `timeoutMs`. @defaultValue systemClock */
  readonly clock?: Clock | undefined;
  /**
   * A pino-compatible logger: one line per refused request and per journal failure, with the
   * status and a fixed reason (never the body, the token or an error's message).
   * @defaultValue no logging
   */
  readonly logger?: Logger | undefined;
}

/** Defaults of {@link WebhookHandlerOptions}. */
export const webhookHandlerDefaults = Object.freeze({
  maxBodyBytes: 1_048_576,
  retryAfterSeconds: 1,
  timeoutMs: 10_000,
});

/** The options after defaults and validation. */
export interface ResolvedWebhookOptions {
  readonly secretToken: string | undefined;
  readonly maxBodyBytes: number;
  readonly retryAfterSeconds: number;
  readonly timeoutMs: number;
  readonly clock: Clock;
  readonly logger: Logger;
}

/**
 * The names of every {@link WebhookHandlerOptions} option, so a wrapper that takes them (as
 * `@telepace/grammy`'s `webhookCallback` does) checks them against this list.
 */
export const webhookHandlerOptionNames = Object.freeze([
  "secretToken",
  "maxBodyBytes",
  "retryAfterSeconds",
  "timeoutMs",
  "clock",
  "logger",
] as const satisfies readonly (keyof WebhookHandlerOptions)[]);

function checkSecretToken(value: unknown): string | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== "string") {
    throw new TypeError(`Expected \`secretToken\` to be a string, got ${describeValue(value)}`);
  }
  // The value is a secret: say what is wrong with it, never what it is.
  if (value.length < 1 || value.length > 256) {
    throw new RangeError(
      `Expected \`secretToken\` to be 1–256 characters long, got ${value.length} characters`,
    );
  }
  if (!/^[A-Za-z0-9_-]+$/.test(value)) {
    throw new RangeError(
      "Expected `secretToken` to hold only A-Z, a-z, 0-9, _ and - (as Telegram allows), got other characters",
    );
  }
  return value;
}

/** Applies defaults and validates every option; an unknown key names the closest valid one. */
export function resolveWebhookOptions(options: unknown): ResolvedWebhookOptions {
  const given = checkOptions("options", options, webhookHandlerOptionNames);
  const d = webhookHandlerDefaults;
  return Object.freeze({
    secretToken: checkSecretToken(given.secretToken),
    maxBodyBytes: checkOptionalNumber("maxBodyBytes", given.maxBodyBytes, d.maxBodyBytes, {
      integer: true,
      min: 1024,
    }),
    retryAfterSeconds: checkOptionalNumber(
      "retryAfterSeconds",
      given.retryAfterSeconds,
      d.retryAfterSeconds,
      { integer: true, min: 1, max: 3600 },
    ),
    timeoutMs: checkOptionalNumber("timeoutMs", given.timeoutMs, d.timeoutMs, {
      integer: true,
      min: 1,
      max: 55_000,
    }),
    clock: checkClock(given.clock, systemClock),
    logger: checkLogger(given.logger),
  });
}
