// The optional, pino-compatible logger every telepace package takes: libraries never print on
// their own, and a logger that fails can never break the component that logs through it.

import { checkMethods } from "./validate.js";

/** One log method: a structured object first, then a message (pino's argument order). */
export type LogMethod = (fields: Record<string, unknown>, message: string) => unknown;

/**
 * A pino-compatible logger. Pass `pino()` or any object with these four methods; without one
 * nothing is logged.
 */
export interface Logger {
  readonly debug: LogMethod;
  readonly info: LogMethod;
  readonly warn: LogMethod;
  readonly error: LogMethod;
}

/** The level names of {@link Logger}. */
export type LogLevel = keyof Logger;

const noop: LogMethod = () => {};

/** The logger used when none is given. */
export const silentLogger: Logger = Object.freeze({
  debug: noop,
  info: noop,
  warn: noop,
  error: noop,
});

const levels: readonly LogLevel[] = ["debug", "info", "warn", "error"];

/** Validates an optional `logger` option; `undefined` gives {@link silentLogger}. */
export function checkLogger(value: unknown, name = "logger"): Logger {
  return checkMethods<Logger>(name, value, levels) ?? silentLogger;
}

function ignore(): void {}

/**
 * Calls one log method and contains whatever it does: a synchronous throw, or a returned promise
 * (an async transport) that rejects. Logging is best effort; it never throws into the caller.
 */
export function safeLog(
  logger: Logger,
  level: LogLevel,
  fields: Record<string, unknown>,
  message: string,
): void {
  try {
    const result: unknown = logger[level](fields, message);
    if (
      result !== null &&
      (typeof result === "object" || typeof result === "function") &&
      typeof (result as { then?: unknown }).then === "function"
    ) {
      // A hostile thenable may throw from `then` itself; the outer catch holds that too.
      (result as PromiseLike<unknown>).then(undefined, ignore);
    }
  } catch {
    // A broken logger must not turn a log line into a failure of the logged operation.
  }
}
