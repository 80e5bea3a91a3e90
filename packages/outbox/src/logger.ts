// The optional, pino-compatible logger: the outbox never prints on its own.

/** One log method: a structured object first, then a message (pino's argument order). */
export type LogMethod = (fields: Record<string, unknown>, message: string) => void;

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

const noop: LogMethod = () => {};

/** The logger used when none is given. */
export const silentLogger: Logger = Object.freeze({
  debug: noop,
  info: noop,
  warn: noop,
  error: noop,
});
