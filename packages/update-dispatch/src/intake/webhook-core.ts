// The framework-neutral half of webhookHandler: what to answer Telegram for one request — by its
// method, its secret token, its body's size and shape, and what the intake did with the update.

import type { Update } from "@grammyjs/types";
import { checkOptions, type Logger, safeLog, type Timer } from "@telepace/core";
import { validUpdateId } from "../journal/update-id.js";
import { secretTokenMatches } from "./secret-token.js";
import type { UpdateIntake } from "./update-intake.js";
import type { ResolvedWebhookOptions } from "./webhook-options.js";

/** The header Telegram sends the `secret_token` of `setWebhook` in (lower case, as Node has it). */
export const SECRET_HEADER = "x-telegram-bot-api-secret-token";

/** What a webhook handler needs of an intake: {@link UpdateIntake.accept}. */
export type WebhookIntake = Pick<UpdateIntake, "accept">;

/**
 * A request body as a framework has it: raw (`bytes`: checked against `maxBodyBytes`, then
 * parsed as JSON) or already `parsed` (by `express.json()`, Fastify's JSON parser…).
 */
export type WebhookBody = { readonly bytes: Uint8Array | string } | { readonly parsed: unknown };

/** A body a framework handed over: text or bytes are read as JSON, anything else is parsed. */
export function bodyFromFramework(value: unknown): WebhookBody {
  return typeof value === "string" || value instanceof Uint8Array
    ? { bytes: value }
    : { parsed: value };
}

/** A request, as {@link WebhookHandler.handle} takes it from any framework. */
export interface WebhookRequest {
  /** The HTTP method; anything but POST is answered 405. */
  readonly method: string;
  /** The `X-Telegram-Bot-Api-Secret-Token` header, or `undefined` when absent. */
  readonly secretToken: string | undefined;
  readonly body: WebhookBody;
}

/** What to answer: the status and headers matter to Telegram, the body only to people. */
export interface WebhookResponse {
  readonly status: number;
  readonly headers: Readonly<Record<string, string>>;
  /** A short fixed text saying why (empty on 200): never the request body, never a token. */
  readonly body: string;
  /** Why this answer, as counted in {@link WebhookHandlerSnapshot}. */
  readonly outcome: WebhookOutcome;
}

/**
 * Why a request got its answer:
 * - `stored` (200) — the journal holds the update now; `duplicate` (200) — it had it before.
 * - `method-not-allowed` (405), `unauthorized` (401: wrong or missing secret token),
 *   `not-json` / `not-an-update` (400), `too-large` (413).
 * - `busy` (503 with `Retry-After`: `maxUnfinished` updates are unfinished), `closed` (503: the
 *   intake is closing), `timed-out` (503 with `Retry-After`: the journal took longer than
 *   `timeoutMs`), `journal-failed` (500: the journal could not store it; Telegram retries).
 */
export type WebhookOutcome =
  | "stored"
  | "duplicate"
  | "method-not-allowed"
  | "unauthorized"
  | "not-json"
  | "not-an-update"
  | "too-large"
  | "busy"
  | "closed"
  | "timed-out"
  | "journal-failed";

/** Counters of a webhook handler; a fresh frozen object on every call. */
export interface WebhookHandlerSnapshot {
  /** Requests answered, ever, by outcome (monotonic). */
  readonly answered: Readonly<Record<WebhookOutcome, number>>;
}

const OUTCOMES: readonly WebhookOutcome[] = [
  "stored",
  "duplicate",
  "method-not-allowed",
  "unauthorized",
  "not-json",
  "not-an-update",
  "too-large",
  "busy",
  "closed",
  "timed-out",
  "journal-failed",
];

const TEXT_PLAIN = "text/plain; charset=utf-8";

/** The fixed answer of each outcome (headers beyond Content-Type, body text, log level). */
const ANSWERS: Readonly<
  Record<WebhookOutcome, { status: number; body: string; level?: "info" | "warn" | "error" }>
> = Object.freeze({
  stored: { status: 200, body: "" },
  duplicate: { status: 200, body: "" },
  "method-not-allowed": { status: 405, body: "Method Not Allowed: POST only", level: "warn" },
  unauthorized: { status: 401, body: "Unauthorized: wrong or missing secret token", level: "warn" },
  "not-json": { status: 400, body: "Bad Request: the body is not JSON", level: "warn" },
  "not-an-update": {
    status: 400,
    body: "Bad Request: the body is not a Telegram update",
    level: "warn",
  },
  "too-large": { status: 413, body: "Payload Too Large", level: "warn" },
  busy: { status: 503, body: "Service Unavailable: too many unfinished updates", level: "info" },
  closed: { status: 503, body: "Service Unavailable: shutting down", level: "info" },
  "timed-out": {
    status: 503,
    body: "Service Unavailable: the journal did not store the update in time",
    level: "warn",
  },
  "journal-failed": {
    status: 500,
    body: "Internal Server Error: the journal could not store the update",
    level: "error",
  },
});

// Fixed log text: a request body or an error's message may carry anything, a token included.
const LOG_MESSAGE = "Webhook request refused";

const decoder = new TextDecoder();
const encoder = new TextEncoder();

/** The framework-neutral webhook handler every adapter wraps. */
export class WebhookCore {
  readonly maxBodyBytes: number;
  readonly #intake: WebhookIntake;
  readonly #options: ResolvedWebhookOptions;
  readonly #logger: Logger;
  readonly #answered: Record<WebhookOutcome, number>;

  constructor(intake: WebhookIntake, options: ResolvedWebhookOptions) {
    this.#intake = intake;
    this.#options = options;
    this.#logger = options.logger;
    this.maxBodyBytes = options.maxBodyBytes;
    this.#answered = Object.fromEntries(OUTCOMES.map((outcome) => [outcome, 0])) as Record<
      WebhookOutcome,
      number
    >;
  }

  /** The whole request, for frameworks without an adapter. */
  async handle(request: WebhookRequest): Promise<WebhookResponse> {
    const given = checkOptions("request", request, ["method", "secretToken", "body"]);
    const body = checkOptions("request.body", given.body, ["bytes", "parsed"]);
    if (!("bytes" in body) && !("parsed" in body)) {
      throw new TypeError("Expected `request.body` to have `bytes` or `parsed`");
    }
    return this.precheck(request.method, request.secretToken) ?? this.accept(request.body);
  }

  /** What is decided before the body is read: 405 for a method other than POST, 401 for a bad secret. */
  precheck(
    method: string | undefined,
    secretToken: string | undefined,
  ): WebhookResponse | undefined {
    if (method?.toUpperCase() !== "POST") return this.answer("method-not-allowed");
    const expected = this.#options.secretToken;
    if (expected !== undefined && !secretTokenMatches(expected, secretToken)) {
      return this.answer("unauthorized");
    }
    return undefined;
  }

  /** Parses the body, hands the update to the intake and maps the result. */
  async accept(body: WebhookBody): Promise<WebhookResponse> {
    let update: unknown;
    if ("bytes" in body) {
      const { bytes } = body;
      const size = typeof bytes === "string" ? encoder.encode(bytes).length : bytes.length;
      if (size > this.maxBodyBytes) return this.answer("too-large");
      try {
        update = JSON.parse(typeof bytes === "string" ? bytes : decoder.decode(bytes));
      } catch {
        return this.answer("not-json");
      }
    } else {
      update = body.parsed;
    }
    if (validUpdateId(update) === undefined) return this.answer("not-an-update");
    return this.answer(...(await this.#store(update as Update)));
  }

  /** The answer of an outcome, counted and logged. */
  answer(outcome: WebhookOutcome, error?: unknown): WebhookResponse {
    this.#answered[outcome]++;
    const { status, body, level } = ANSWERS[outcome];
    if (level !== undefined) {
      const fields: Record<string, unknown> = { status, outcome };
      if (error !== undefined) {
        // The error's name and code only: its message may carry a path or a token.
        fields.errorName = error instanceof Error ? error.name : typeof error;
        const code = (error as { code?: unknown } | null)?.code;
        if (typeof code === "string") fields.errorCode = code;
      }
      safeLog(this.#logger, level, fields, LOG_MESSAGE);
    }
    const headers: Record<string, string> = { "Content-Type": TEXT_PLAIN };
    if (outcome === "busy" || outcome === "timed-out") {
      headers["Retry-After"] = String(this.#options.retryAfterSeconds);
    }
    if (outcome === "method-not-allowed") headers.Allow = "POST";
    // The rest of an oversized body is not read: the connection cannot be reused.
    if (outcome === "too-large") headers.Connection = "close";
    return Object.freeze({ status, headers: Object.freeze(headers), body, outcome });
  }

  snapshot(): WebhookHandlerSnapshot {
    return Object.freeze({ answered: Object.freeze({ ...this.#answered }) });
  }

  /** accept() within `timeoutMs`: the outcome, and the error of a failed store. */
  async #store(update: Update): Promise<[WebhookOutcome, unknown?]> {
    const controller = new AbortController();
    let timer: Timer | undefined;
    const timedOut = new Promise<[WebhookOutcome, unknown?]>((resolve) => {
      timer = this.#options.clock.setTimer(() => {
        // Abandons an accept still waiting to reach the journal; one in the journal completes.
        controller.abort();
        resolve(["timed-out"]);
      }, this.#options.timeoutMs);
    });
    const accepted = this.#intake.accept(update, { signal: controller.signal }).then(
      (result): [WebhookOutcome, unknown?] => [result.status],
      // The update was checked as accept() checks it: whatever it rejects with now is the journal's.
      (error: unknown): [WebhookOutcome, unknown?] => ["journal-failed", error],
    );
    try {
      return await Promise.race([accepted, timedOut]);
    } finally {
      timer?.cancel();
    }
  }
}
