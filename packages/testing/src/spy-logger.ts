// A pino-shaped logger that records every call, to assert what a component logs (and that a
// secret never appears in it).

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

/** A logger that records every call in order. */
export function spyLogger(): SpyLogger {
  const calls: LogCall[] = [];
  const method = (level: LogLevel) => (fields: Record<string, unknown>, message: string) => {
    calls.push({ level, fields, message });
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
