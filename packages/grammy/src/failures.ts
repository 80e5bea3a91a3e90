// grammY's failures in the outbox's vocabulary and back: an `ok: false` envelope becomes an
// `ApiFailure` the outbox classifies (429, 5xx, not modified, 403, migrated), an `HttpError` a
// `NetworkError` that says whether the request may have reached Telegram.

import type { ResponseParameters } from "@grammyjs/types";
import { isConnectFailure, NetworkError, type NetworkFailure } from "@telepace/outbox";
import { HttpError } from "grammy";

/** The `ok: false` envelope of the Bot API, as grammY's transformers see it. */
export interface FailedEnvelope {
  readonly ok: false;
  readonly error_code: number;
  readonly description: string;
  readonly parameters?: ResponseParameters | undefined;
}

/**
 * Telegram answered `ok: false`. It carries the envelope's fields under their Bot API names, which
 * is what the outbox's `classifyFailure` reads; the transformer hands the envelope itself back to
 * grammY, which turns it into the `GrammyError` its users know.
 */
export class ApiFailure extends Error {
  readonly method: string;
  readonly envelope: FailedEnvelope;
  readonly error_code: number;
  readonly description: string;
  readonly parameters: ResponseParameters;

  constructor(method: string, envelope: FailedEnvelope) {
    super(`${method} failed: ${envelope.error_code} ${envelope.description}`);
    this.name = "ApiFailure";
    this.method = method;
    this.envelope = envelope;
    this.error_code = envelope.error_code;
    this.description = envelope.description;
    this.parameters = envelope.parameters ?? {};
  }
}

function field(value: unknown, name: string): unknown {
  return typeof value === "object" && value !== null
    ? (value as Record<string, unknown>)[name]
    : undefined;
}

function failureOf(inner: unknown): NetworkFailure {
  if (isConnectFailure(inner)) return "connect";
  // node-fetch: a body that is not JSON; a plain SyntaxError from other fetch implementations.
  if (field(inner, "type") === "invalid-json" || inner instanceof SyntaxError) {
    return "bad-response";
  }
  const message = field(inner, "message");
  if (typeof message === "string" && /timed out/i.test(message)) return "timeout";
  return "connection-lost";
}

/**
 * A failure `prev` threw, for the outbox: grammY's `HttpError` becomes a {@link NetworkError}
 * (with the `HttpError` as its `cause`); anything else is passed on as it is.
 */
export function networkFailureOf(method: string, error: unknown): unknown {
  if (!(error instanceof HttpError)) return error;
  const failure = failureOf(error.error);
  return new NetworkError(`Network request for '${method}' failed (${failure})`, {
    method,
    failure,
    mayHaveReachedServer: failure !== "connect",
    cause: error,
  });
}

/** The envelope or `HttpError` a failure came from, looking through `cause`s. */
export function grammyFailureOf(error: unknown): FailedEnvelope | HttpError | undefined {
  let current: unknown = error;
  for (let depth = 0; depth < 8 && current !== undefined; depth++) {
    if (current instanceof ApiFailure) return current.envelope;
    if (current instanceof HttpError) return current;
    current = field(current, "cause");
  }
  return undefined;
}
