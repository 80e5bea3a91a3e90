// Which transport failures prove that a request never left this machine, by their error code:
// the one list every transport (the client's undici pool, grammY's fetch) classifies with, so a
// send that failed this way is retried and not reported as maybe-delivered.

// No connection was made: refused, no address, unreachable, no answer to the connect, or a TLS
// certificate this side refused before a byte of the request was written.
const NEVER_SENT: ReadonlySet<string> = new Set([
  "ECONNREFUSED",
  "ENOTFOUND",
  "EAI_AGAIN",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "UND_ERR_CONNECT_TIMEOUT",
  "ERR_TLS_CERT_ALTNAME_INVALID",
  "CERT_HAS_EXPIRED",
  "DEPTH_ZERO_SELF_SIGNED_CERT",
  "SELF_SIGNED_CERT_IN_CHAIN",
  "UNABLE_TO_VERIFY_LEAF_SIGNATURE",
  "UNABLE_TO_GET_ISSUER_CERT_LOCALLY",
]);

function field(value: unknown, name: string): unknown {
  return typeof value === "object" && value !== null
    ? (value as Record<string, unknown>)[name]
    : undefined;
}

function codeOf(error: unknown, depth: number): string | undefined {
  const code = field(error, "code");
  if (typeof code === "string") return code;
  if (depth === 0) return undefined;
  const nested = field(error, "errors");
  if (Array.isArray(nested) && nested.length > 0) return codeOf(nested[0], depth - 1);
  const cause = field(error, "cause");
  return cause === undefined ? undefined : codeOf(cause, depth - 1);
}

/**
 * The error code of a transport failure: its own `code`, else its `cause`'s (fetch wraps the
 * socket's error) or the first of an `AggregateError`'s (a happy-eyeballs connect tries every
 * address), a few levels deep.
 */
export function networkErrorCode(error: unknown): string | undefined {
  return codeOf(error, 4);
}

/**
 * Whether a transport failure proves the request never reached the server (the connection was
 * never made), judged by its {@link networkErrorCode}. A `NetworkError` built from one has
 * `failure: "connect"` and `mayHaveReachedServer: false`.
 */
export function isConnectFailure(error: unknown): boolean {
  const code = networkErrorCode(error);
  return code !== undefined && NEVER_SENT.has(code);
}
