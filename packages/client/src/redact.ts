// Secret redaction: the bot token must never appear in an error, a stack, a cause or a log line,
// and undici's errors can carry the request path, which contains it.

const REDACTED = "<redacted>";

function scrub(text: string, secrets: readonly string[]): string {
  let result = text;
  for (const secret of secrets) {
    if (secret.length > 0 && result.includes(secret)) result = result.split(secret).join(REDACTED);
  }
  return result;
}

/**
 * Removes `secret` (raw and URL-encoded) from a thrown value in place: the message, the stack,
 * every string property, the `cause` chain and an AggregateError's `errors`. Returns the value
 * (a string comes back scrubbed).
 */
export function redactSecret<T>(value: T, secret: string): T {
  const secrets = [secret, encodeURIComponent(secret)];
  const seen = new Set<unknown>();
  const visit = (current: unknown): unknown => {
    if (typeof current === "string") return scrub(current, secrets);
    if (typeof current !== "object" || current === null || seen.has(current)) return current;
    seen.add(current);
    for (const key of Object.getOwnPropertyNames(current)) {
      const descriptor = Object.getOwnPropertyDescriptor(current, key);
      if (descriptor === undefined || !("value" in descriptor)) continue;
      const inner = descriptor.value as unknown;
      if (typeof inner === "string") {
        const cleaned = scrub(inner, secrets);
        if (cleaned !== inner && descriptor.writable) {
          (current as Record<string, unknown>)[key] = cleaned;
        } else if (cleaned !== inner && descriptor.configurable) {
          Object.defineProperty(current, key, { ...descriptor, value: cleaned });
        }
      } else if (typeof inner === "object" && inner !== null && key !== "socket") {
        visit(inner);
      }
    }
    return current;
  };
  return visit(value) as T;
}
