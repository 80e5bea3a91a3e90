// A pino-shaped logger that records every call, to assert what a component logs (and that a
// secret never appears in it), or that a logger which throws or rejects breaks nothing.

import type { Logger, LogLevel } from "@telepace/core";

/** One recorded log call. */
export interface LogCall {
  readonly level: LogLevel;
  readonly fields: Readonly<Record<string, unknown>>;
  readonly message: string;
}

/** A {@link Logger} that records its calls. */
export interface SpyLogger extends Logger {
  readonly calls: LogCall[];
  /** Every call as one string (level, message, fields as JSON), for "never contains" checks. */
  text(): string;
}

/** Options of {@link spyLogger}. */
export interface SpyLoggerOptions {
  /**
   * Called after each call is recorded; what it returns (or throws) is what the log method
   * returns (or throws), to play a failing transport. @defaultValue returns `undefined`
   */
  readonly answer?: (call: LogCall) => unknown;
}

/**
 * A logger that records every call in order.
 *
 * @example
 * const logger = spyLogger({ answer: () => Promise.reject(new Error("transport down")) });
 */
export function spyLogger(options: SpyLoggerOptions = {}): SpyLogger {
  const { answer } = options;
  const calls: LogCall[] = [];
  const method = (level: LogLevel) => (fields: Record<string, unknown>, message: string) => {
    const call = { level, fields, message };
    calls.push(call);
    return answer?.(call);
  };
  return {
    calls,
    debug: method("debug"),
    info: method("info"),
    warn: method("warn"),
    error: method("error"),
    text: () =>
      calls
        .map((call) => `${call.level} ${call.message} ${JSON.stringify(call.fields)}`)
        .join("\n"),
  };
}
