// Telegram's webhook delivery for one bot: each pending update is POSTed to the webhook, the
// updates of one delivery queue one at a time and in order, different queues in parallel up to
// max_connections; a 2xx confirms an update, anything else is retried with growing delays.

import type { Clock, Timer } from "@telepace/core";
import type { QueuedUpdate, UpdateQueue } from "./update-queue.js";
import { webhookQueueKey } from "./webhook-queue-key.js";

/** Where and how one webhook setting delivers. */
export interface WebhookTarget {
  readonly url: URL;
  /** The loopback address connections go to: setWebhook's `ip_address`, else the URL's host. */
  readonly address: string;
  readonly maxConnections: number;
  readonly secretToken: string | undefined;
}

/** An HTTP answer of the webhook. */
export interface WebhookResponse {
  readonly kind: "response";
  readonly status: number;
  readonly statusText: string;
  /** The answer's `Retry-After`, in seconds; 0 when absent or unreadable. */
  readonly retryAfterSeconds: number;
  readonly contentType: string | undefined;
  /** The body; `undefined` when it was over the bound of a webhook reply. */
  readonly body: Buffer | undefined;
  /** The address the connection reached. */
  readonly remoteAddress: string | undefined;
}

/** What one POST to the webhook came back with: an answer, or a failure with Telegram's text. */
export type WebhookAnswer =
  | WebhookResponse
  | { readonly kind: "failure"; readonly message: string };

/** The HTTP client of one webhook setting. */
export interface WebhookConnection {
  /** POSTs one update; never rejects (a failure is an answer). Aborting ends it as a failure. */
  post(json: string, signal: AbortSignal): Promise<WebhookAnswer>;
  /** Drops the connections. */
  close(): void;
}

/** The result of one delivery attempt. */
export interface WebhookAttempt {
  readonly updateId: number;
  /** `confirmed` (a 2xx), `failed` (retried later) or `dropped` (it would expire before a retry). */
  readonly outcome: "confirmed" | "failed" | "dropped";
  /** The HTTP status, 0 when no answer came. */
  readonly status: number;
  /** From the POST to its answer, in ms of the simulator clock. */
  readonly durationMs: number;
  /** How often this update had failed before this attempt. */
  readonly failures: number;
}

/** What a delivery needs from the world around it. */
export interface WebhookHooks {
  readonly clock: Clock;
  readonly timeScale: number;
  /** Unix time in seconds, for `last_error_date`. */
  readonly unixNow: () => number;
  /** Opens the HTTP client of a setting. */
  readonly connect: (target: WebhookTarget) => WebhookConnection;
  /** A 2xx with a body: the webhook may have answered with a method call. */
  readonly reply: (response: WebhookResponse) => void;
  /** Every attempt, for counters, diagnostics and logs. */
  readonly report: (attempt: WebhookAttempt) => void;
}

/** The most recent failure, as getWebhookInfo reports it. */
export interface WebhookError {
  /** Unix time in seconds. */
  readonly date: number;
  readonly message: string;
}

// Durations in Telegram seconds, divided by the time scale. The real server retries a failed
// update at once, then after 2, 4, 8… s up to 60–120 s (random); here up to 60 s exactly.
const MAX_RESEND_DELAY_S = 60;
const MAX_RETRY_AFTER_S = 3600;
const ANSWER_TIMEOUT_S = 60;
// Without a 2xx in this long the real server opens one connection at a time.
const RAMP_UP_WINDOW_S = 10;

/** A delivery queue: its updates in order, and the back-off of the one at its head. */
interface Lane {
  readonly key: string;
  readonly items: QueuedUpdate[];
  failures: number;
  delayS: number;
  timer: Timer | undefined;
}

/** The webhook delivery of one bot; idle until {@link start}. */
export class WebhookDelivery {
  readonly #queue: UpdateQueue;
  readonly #hooks: WebhookHooks;
  readonly #lanes = new Map<string, Lane>();
  readonly #inFlight = new Set<AbortController>();
  #ready: Lane[] = [];
  #target: WebhookTarget | undefined;
  #connection: WebhookConnection | undefined;
  #nextSeq = 0;
  #lastSuccessAtMs = Number.NEGATIVE_INFINITY;
  #lastError: WebhookError | undefined;
  #ipAddress: string | undefined;
  // Bumped by start() and stop(), so answers of an older setting are ignored.
  #generation = 0;

  constructor(queue: UpdateQueue, hooks: WebhookHooks) {
    this.#queue = queue;
    this.#hooks = hooks;
  }

  /** Requests waiting for the webhook's answer now. */
  get inFlight(): number {
    return this.#inFlight.size;
  }

  /** The most recent failure of this setting, or `undefined`. */
  get lastError(): WebhookError | undefined {
    return this.#lastError;
  }

  /** The address the last answer came from, once one came. */
  get ipAddress(): string | undefined {
    return this.#ipAddress;
  }

  /** Delivers to `target` from now on, starting with every pending update. */
  start(target: WebhookTarget): void {
    this.stop();
    this.#target = target;
    this.#connection = this.#hooks.connect(target);
    this.notify();
  }

  /** Stops delivering: requests in flight are abandoned (their updates stay pending). */
  stop(): void {
    this.#generation++;
    for (const controller of this.#inFlight) controller.abort();
    this.#inFlight.clear();
    for (const lane of this.#lanes.values()) lane.timer?.cancel();
    this.#lanes.clear();
    this.#ready = [];
    this.#connection?.close();
    this.#connection = undefined;
    this.#target = undefined;
    this.#nextSeq = 0;
    this.#lastSuccessAtMs = Number.NEGATIVE_INFINITY;
    this.#lastError = undefined;
    this.#ipAddress = undefined;
  }

  /** Takes the updates queued since the last call into their delivery queues. */
  notify(): void {
    if (this.#target === undefined) return;
    for (const item of this.#queue.pendingFrom(this.#nextSeq, this.#hooks.clock.now())) {
      this.#nextSeq = item.seq + 1;
      const key = webhookQueueKey(item.update);
      let lane = this.#lanes.get(key);
      if (lane === undefined) {
        lane = { key, items: [], failures: 0, delayS: 1, timer: undefined };
        this.#lanes.set(key, lane);
        this.#ready.push(lane);
      }
      lane.items.push(item);
    }
    this.#pump();
  }

  #ms(seconds: number): number {
    return (seconds * 1000) / this.#hooks.timeScale;
  }

  #pump(): void {
    const target = this.#target;
    if (target === undefined) return;
    const warm = this.#hooks.clock.now() - this.#lastSuccessAtMs <= this.#ms(RAMP_UP_WINDOW_S);
    const limit = warm ? target.maxConnections : 1;
    while (this.#ready.length > 0 && this.#inFlight.size < limit) {
      this.#send(this.#ready.shift() as Lane);
    }
  }

  #send(lane: Lane): void {
    const clock = this.#hooks.clock;
    const startedAt = clock.now();
    // Updates cleared (drop_pending_updates) or expired meanwhile are no longer sent.
    while (
      lane.items.length > 0 &&
      !this.#queue.isPending(lane.items[0] as QueuedUpdate, startedAt)
    ) {
      lane.items.shift();
    }
    const item = lane.items[0];
    if (item === undefined) {
      this.#lanes.delete(lane.key);
      return;
    }
    const controller = new AbortController();
    this.#inFlight.add(controller);
    const generation = this.#generation;
    let timedOut = false;
    const timer = clock.setTimer(() => {
      timedOut = true;
      controller.abort();
    }, this.#ms(ANSWER_TIMEOUT_S));
    (this.#connection as WebhookConnection)
      .post(item.json, controller.signal)
      .catch((): WebhookAnswer => ({ kind: "failure", message: "Webhook connection closed" }))
      .then((answer) => {
        timer.cancel();
        if (generation !== this.#generation) return;
        this.#inFlight.delete(controller);
        const result: WebhookAnswer = timedOut
          ? { kind: "failure", message: "Read timeout expired" }
          : answer;
        this.#settle(lane, item, result, clock.now() - startedAt);
        this.#pump();
      });
  }

  #settle(lane: Lane, item: QueuedUpdate, answer: WebhookAnswer, durationMs: number): void {
    const now = this.#hooks.clock.now();
    const failures = lane.failures;
    const report = (outcome: WebhookAttempt["outcome"]): void =>
      this.#hooks.report({
        updateId: item.update.update_id,
        outcome,
        status: answer.kind === "response" ? answer.status : 0,
        durationMs,
        failures,
      });
    if (answer.kind === "response") this.#ipAddress ??= answer.remoteAddress;
    if (answer.kind === "response" && answer.status >= 200 && answer.status <= 299) {
      this.#lastSuccessAtMs = now;
      this.#finishHead(lane, item);
      report("confirmed");
      if (answer.body !== undefined && answer.body.length > 0) this.#hooks.reply(answer);
      this.#requeue(lane, 0);
      return;
    }
    this.#lastError = {
      date: this.#hooks.unixNow(),
      message:
        answer.kind === "response"
          ? `Wrong response from the webhook: ${answer.status} ${answer.statusText}`
          : answer.message,
    };
    const retryAfterS =
      answer.kind === "response"
        ? Math.min(Math.max(answer.retryAfterSeconds, 0), MAX_RETRY_AFTER_S)
        : 0;
    let delayS = retryAfterS;
    if (retryAfterS === 0 && lane.failures > 0) {
      lane.delayS = Math.min(MAX_RESEND_DELAY_S, lane.delayS * 2);
      delayS = lane.delayS;
    }
    if (now + this.#ms(delayS) > this.#queue.expiresAtMs(item)) {
      // Like Telegram: an update that would expire before its next try is given up.
      this.#finishHead(lane, item);
      report("dropped");
      this.#requeue(lane, 0);
      return;
    }
    lane.failures++;
    report("failed");
    this.#requeue(lane, delayS);
  }

  /** The head update is done with (confirmed or given up): the next one starts afresh. */
  #finishHead(lane: Lane, item: QueuedUpdate): void {
    this.#queue.confirm(item);
    lane.items.shift();
    lane.failures = 0;
    lane.delayS = 1;
  }

  #requeue(lane: Lane, delayS: number): void {
    if (lane.items.length === 0) {
      this.#lanes.delete(lane.key);
      return;
    }
    if (delayS <= 0) {
      this.#ready.push(lane);
      return;
    }
    lane.timer = this.#hooks.clock.setTimer(() => {
      lane.timer = undefined;
      this.#ready.push(lane);
      this.#pump();
    }, this.#ms(delayS));
  }
}
