// Secret redaction: the bot token must never appear in an error, a stack, a cause, an outcome or a
// log line, and both undici's errors and a server's answer can carry the request path, which
// contains it.

const REDACTED = "<redacted>";

/** Every spelling of the secret a URL, a log or a JSON body may hold. */
function spellings(secret: string): string[] {
  const encoded = encodeURIComponent(secret);
  return [
    ...new Set([
      secret,
      encoded,
      encoded.replace(/%[0-9A-F]{2}/g, (hex) => hex.toLowerCase()),
      JSON.stringify(secret).slice(1, -1),
    ]),
  ].filter((spelling) => spelling.length > 0);
}

function scrub(text: string, secrets: readonly string[]): string {
  let result = text;
  for (const secret of secrets) {
    if (result.includes(secret)) result = result.split(secret).join(REDACTED);
  }
  return result;
}

function isPlainData(value: object): boolean {
  if (Array.isArray(value)) return true;
  const prototype = Object.getPrototypeOf(value);
  return prototype === Object.prototype || prototype === null;
}

// Objects not worth walking: byte buffers (numbers only, possibly huge) and sockets.
function isOpaque(value: object, key: string): boolean {
  return key === "socket" || ArrayBuffer.isView(value) || value instanceof ArrayBuffer;
}

/**
 * Removes `secret` (raw, URL-encoded and JSON-escaped) from every string reachable from a value:
 * an error's message, stack and string fields, its `cause` chain, an AggregateError's `errors`,
 * and nested objects such as a `TelegramApiError`'s `parameters`. Mutable objects are scrubbed in
 * place; a frozen (or otherwise read-only) plain object or array is replaced in its parent by a
 * scrubbed copy, frozen like the original, so a server that echoes the request URL inside frozen
 * parameters cannot leak it. Returns the value (a string or a frozen plain object comes back as a
 * scrubbed copy).
 */
export function redactSecret<T>(value: T, secret: string): T {
  const secrets = spellings(secret);
  if (secrets.length === 0) return value;
  // Original → what replaces it (itself when it was scrubbed in place).
  const done = new Map<object, unknown>();

  const contains = (current: unknown, seen: Set<object>): boolean => {
    if (typeof current === "string") return secrets.some((s) => current.includes(s));
    if (typeof current !== "object" || current === null || seen.has(current)) return false;
    seen.add(current);
    for (const key of Object.getOwnPropertyNames(current)) {
      const descriptor = Object.getOwnPropertyDescriptor(current, key);
      if (descriptor === undefined || !("value" in descriptor)) continue;
      const inner = descriptor.value as unknown;
      if (typeof inner === "object" && inner !== null && isOpaque(inner, key)) continue;
      if (contains(inner, seen)) return true;
    }
    return false;
  };

  const copy = (current: object): object => {
    const replacement: Record<string, unknown> | unknown[] = Array.isArray(current)
      ? []
      : Object.create(Object.getPrototypeOf(current));
    done.set(current, replacement);
    for (const key of Object.getOwnPropertyNames(current)) {
      const descriptor = Object.getOwnPropertyDescriptor(current, key);
      if (descriptor === undefined || !("value" in descriptor)) continue;
      if (Array.isArray(replacement) && key === "length") continue;
      Object.defineProperty(replacement, key, {
        ...descriptor,
        value: visit(descriptor.value, key),
        writable: true,
        configurable: true,
      });
    }
    return Object.isFrozen(current) ? Object.freeze(replacement) : replacement;
  };

  const visit = (current: unknown, key: string): unknown => {
    if (typeof current === "string") return scrub(current, secrets);
    if (typeof current !== "object" || current === null || isOpaque(current, key)) return current;
    if (done.has(current)) return done.get(current);
    if (isPlainData(current) && !Object.isExtensible(current)) {
      // Frozen or sealed data cannot be scrubbed in place: copy it, only when it needs it.
      if (!contains(current, new Set())) {
        done.set(current, current);
        return current;
      }
      return copy(current);
    }
    done.set(current, current);
    for (const name of Object.getOwnPropertyNames(current)) {
      const descriptor = Object.getOwnPropertyDescriptor(current, name);
      if (descriptor === undefined || !("value" in descriptor)) continue;
      const inner = descriptor.value as unknown;
      const cleaned = visit(inner, name);
      if (cleaned === inner) continue;
      if (descriptor.writable) {
        (current as Record<string, unknown>)[name] = cleaned;
      } else if (descriptor.configurable) {
        Object.defineProperty(current, name, { ...descriptor, value: cleaned });
      }
    }
    return current;
  };

  return visit(value, "") as T;
}
