// Structured logs (pino) that cannot carry the bot token: every serialised line is scrubbed before
// it is written, so a token inside an error message, a URL or a stack never reaches the output.

import { type DestinationStream, type Logger, pino } from "pino";

/** Replaces every occurrence of each secret in `text` with `<redacted>`. */
export function scrub(text: string, secrets: readonly string[]): string {
  let out = text;
  for (const secret of secrets) {
    if (secret.length > 0) out = out.split(secret).join("<redacted>");
  }
  return out;
}

/**
 * A pino logger at `level` whose output never contains any of `secrets` (the token, and the
 * `bot<token>` path segment that URLs carry).
 */
export function createLogger(
  level: string,
  secrets: readonly string[],
  destination: DestinationStream = pino.destination({ dest: 2, sync: true }),
): Logger {
  return pino(
    {
      level,
      base: { app: "telepace-reference-bot" },
      hooks: { streamWrite: (line) => scrub(line, secrets) },
    },
    destination,
  );
}
