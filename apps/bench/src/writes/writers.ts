// The contenders of the writes comparison behind one interface: telepace's TelegramClient,
// grammY's Api with @telepace/grammy, and grammY's Api with the throttler and auto-retry in either
// order, or auto-retry alone.

import { autoRetry } from "@grammyjs/auto-retry";
import { TelegramClient } from "@telepace/client";
import { type MaybeDeliveredPolicy, replaceProgress, telepace } from "@telepace/grammy";
import { classifyFailure, type FailureVerdict, TelegramOutbox } from "@telepace/outbox";
import { ScaledClock, scaledThrottler } from "@telepace/testing";
import { Api, GrammyError, HttpError } from "grammy";

/** One message the workload sends and waits for. */
export interface SendRecord {
  readonly chatId: number;
  /** Position among the messages sent into this chat, also written into the text as `#seq`. */
  readonly seq: number;
  readonly kind: "progress" | "final" | "reply" | "broadcast";
  readonly text: string;
  /** Real `performance.now()` when the workload asked for it. */
  readonly issuedAt: number;
  /** `skipped`: never sent, because the handler sending it had stopped at an earlier throw. */
  status: "pending" | "delivered" | "failed" | "skipped";
  messageId?: number;
  /** The client reported that a failed send may have reached Telegram. */
  maybeDelivered: boolean;
  /** The send threw (grammY's calls), so a handler without try/catch stops there. */
  threw?: boolean;
}

/** What the workloads need from a client. */
export interface Writer {
  readonly name: string;
  readonly settings: Readonly<Record<string, string | number>>;
  /** Sends a message; settles the record and resolves when the client is done with it. */
  send(record: SendRecord): Promise<void>;
  /** A new progress text for a delivered progress message. */
  edit(chatId: number, messageId: number, text: string): void;
  /**
   * The final message of a job: it replaces the progress message (deleted once the final was
   * delivered). Resolves when the final settled; the deletion is tracked by {@link Writer.idle}.
   */
  finish(record: SendRecord, progressId: number | undefined): Promise<void>;
  /** Resolves when no send or delete this writer started is still outstanding. */
  idle(): Promise<void>;
  /** Counters of the client's own work (edits issued, superseded, failed …). */
  readonly counters: Record<string, number>;
  /** Stops everything still queued (after the deadline) and releases resources. */
  close(): Promise<void>;
}

/** Where the writers send and how fast Telegram's time runs there. */
export interface Target {
  readonly apiRoot: string;
  readonly token: string;
  /** The sim's time scale. */
  readonly scale: number;
  /** Aborted at the deadline: everything still queued gives up. */
  readonly signal: AbortSignal;
}

/** Tracks outstanding promises so a run can wait for them. */
class Outstanding {
  #count = 0;
  #waiters: (() => void)[] = [];

  track<T>(promise: Promise<T>): Promise<T> {
    this.#count++;
    const done = (): void => {
      this.#count--;
      if (this.#count === 0) for (const waiter of this.#waiters.splice(0)) waiter();
    };
    promise.then(done, done);
    return promise;
  }

  idle(): Promise<void> {
    return this.#count === 0
      ? Promise.resolve()
      : new Promise((resolve) => this.#waiters.push(resolve));
  }
}

/**
 * telepace: TelegramClient with every default, on a clock in Telegram time. The only adaptation
 * is converting the sim's time-scaled `retry_after` back to Telegram milliseconds.
 */
/**
 * An outbox in Telegram time: a scaled clock, and a classifier that converts the sim's scaled
 * `retry_after` back to Telegram milliseconds. Every other option keeps its default.
 */
export function telegramTime(scale: number) {
  const clock = new ScaledClock(scale);
  const classify = (error: unknown, context: { idempotent: boolean }): FailureVerdict => {
    const verdict = classifyFailure(error, context);
    return verdict.action === "rate-limited"
      ? { action: "rate-limited", retryAfterMs: verdict.retryAfterMs * scale }
      : verdict;
  };
  return { clock, classify };
}

export function telepaceWriter(target: Target): Writer {
  const { clock, classify } = telegramTime(target.scale);
  const client = new TelegramClient({
    token: target.token,
    apiRoot: target.apiRoot,
    clock,
    // Network timeouts stay real: 30 s of real time, like the peers' unhurried defaults.
    requestTimeoutMs: 30_000 * target.scale,
    outbox: { classifyFailure: classify },
  });
  const outstanding = new Outstanding();
  const counters: Record<string, number> = { editsIssued: 0, editsSuperseded: 0, editsFailed: 0 };
  const options = { signal: target.signal };
  const settle = async (
    record: SendRecord,
    outcome: Promise<Awaited<ReturnType<TelegramClient["sendMessage"]>>>,
  ): Promise<void> => {
    try {
      const result = await outcome;
      if (result.status === "delivered" && result.result !== undefined) {
        record.status = "delivered";
        record.messageId = result.result.message_id;
        if (result.followUp !== undefined) void outstanding.track(result.followUp);
      } else {
        record.status = "failed";
        record.maybeDelivered = result.status === "failed" && result.maybeDelivered;
      }
    } catch {
      record.status = "failed"; // aborted at the deadline
    }
  };
  return {
    name: "telepace TelegramClient (outbox)",
    settings: { outbox: "defaults", clock: `Telegram time (×${target.scale})` },
    counters,
    send: (record) =>
      outstanding.track(
        settle(record, client.sendMessage(record.chatId, record.text, {}, options)),
      ),
    edit(chatId, messageId, text) {
      counters.editsIssued = (counters.editsIssued ?? 0) + 1;
      client.editMessageText(chatId, messageId, text, {}, options).then(
        (outcome) => {
          if (outcome.status === "superseded")
            counters.editsSuperseded = (counters.editsSuperseded ?? 0) + 1;
          else if (outcome.status !== "delivered")
            counters.editsFailed = (counters.editsFailed ?? 0) + 1;
        },
        () => {},
      );
    },
    finish: (record, progressId) =>
      outstanding.track(
        settle(
          record,
          client.sendMessage(
            record.chatId,
            record.text,
            {},
            { ...options, replaceMessageId: progressId },
          ),
        ),
      ),
    idle: () => outstanding.idle(),
    close: () => client.close({ drain: false, timeoutMs: 1_000 }),
  };
}

/** How a grammY client is assembled. */
export interface GrammyRecipe {
  /** Transformers in installation order (`api.config.use` calls; the last is outermost). */
  readonly install: readonly ("throttler" | "auto-retry")[];
  /**
   * How the bot author drives progress; both are common, so both are run. `every-state`: an
   * editMessageText per progress state; `latest-only`: one edit in flight per message, then the
   * newest text (coalescing written by hand, the fair peer); `none`: the workload has no
   * progress (the row's name then says nothing about edits).
   */
  readonly edits: "every-state" | "latest-only" | "none";
  /** auto-retry's `rethrowHttpErrors`: network errors go to the caller instead of a retry. */
  readonly rethrowHttpErrors?: boolean;
}

/** How fast a limiter lets sends to distinct chats through, measured in isolation. */
export interface PaceCheck {
  readonly limiter: string;
  readonly scale: number;
  readonly sends: number;
  /** Sends per Telegram second after the first 30 (the global burst both allow). */
  readonly sendsPerSecond: number;
}

function paceOf(limiter: string, scale: number, sends: number, starts: number[]): PaceCheck {
  const sorted = [...starts].sort((a, b) => a - b);
  const first = sorted[0] as number;
  const last = sorted[sorted.length - 1] as number;
  return {
    limiter,
    scale,
    sends,
    sendsPerSecond: (sends - 30) / (((last - first) * scale) / 1000),
  };
}

/**
 * Runs `sends` sends to distinct chats through the scaled throttler and through the outbox on a
 * scaled clock, with no network: whether each keeps Telegram's 30/s at this time scale, or the
 * scale is too fast for its timers (the check reports what it measured either way).
 */
export async function checkPace(scale: number, sends = 120): Promise<PaceCheck[]> {
  const throttle = scaledThrottler(scale) as unknown as (
    prev: () => Promise<unknown>,
    method: string,
    payload: Record<string, unknown>,
  ) => Promise<unknown>;
  const throttled: number[] = [];
  await Promise.all(
    Array.from({ length: sends }, (_, index) =>
      throttle(
        async () => {
          throttled.push(performance.now());
          return { ok: true, result: true };
        },
        "sendMessage",
        { chat_id: 1_000_000 + index, text: "pace" },
      ),
    ),
  );
  const outbox = new TelegramOutbox({ clock: new ScaledClock(scale) });
  const paced: number[] = [];
  await Promise.all(
    Array.from({ length: sends }, (_, index) =>
      outbox.enqueue({
        chatId: 1_000_000 + index,
        execute: async () => {
          paced.push(performance.now());
          return true;
        },
      }),
    ),
  );
  await outbox.close();
  return [
    paceOf("telepace outbox", scale, sends, paced),
    paceOf("grammY throttler", scale, sends, throttled),
  ];
}

/**
 * The row's name: latest-only edits are the fair peer (coalescing written by hand), an edit per
 * state is how the plugins are used naively (nothing coalesces it).
 */
function recipeName(recipe: GrammyRecipe): string {
  const installed =
    recipe.install.length === 1 ? "auto-retry only" : recipe.install.join(", then ");
  const stack = recipe.rethrowHttpErrors === true ? `${installed} (rethrowHttpErrors)` : installed;
  const mode = {
    "latest-only": " [latest-only edits: fair peer]",
    "every-state": " [edit per state: naive]",
    none: "",
  }[recipe.edits];
  return `grammY ${stack}${mode}`;
}

// grammY types its signal parameter with the abort-controller shim; at runtime it is the same.
type GrammySignal = NonNullable<Parameters<Api["deleteMessage"]>[2]>;

/** Whether a failed grammY send may have reached Telegram (and was not resent). */
function mayHaveArrived(error: unknown, target: Target): boolean {
  if (target.signal.aborted) return false;
  return error instanceof HttpError || (error instanceof GrammyError && error.error_code >= 500);
}

/**
 * grammY's Api with `api.config.use(telepace())` and nothing else, used the plain way: an
 * `editMessageText` per progress state, not awaited (the plugin coalesces), the final through
 * `replaceProgress`. Its outbox runs in Telegram time like the telepace row's; `maybeDelivered`
 * is its default (`throw`) unless a policy is given.
 */
export function grammyTelepaceWriter(target: Target, policy?: MaybeDeliveredPolicy): Writer {
  const { clock, classify } = telegramTime(target.scale);
  const api = new Api(target.token, { apiRoot: target.apiRoot });
  const pace = telepace({
    clock,
    classifyFailure: classify,
    ...(policy === undefined ? {} : { maybeDelivered: policy }),
  });
  api.config.use(pace);
  const signal = target.signal as unknown as GrammySignal;
  const outstanding = new Outstanding();
  const counters: Record<string, number> = { editsIssued: 0, editsFailed: 0 };
  const settle = async (record: SendRecord, sending: Promise<{ message_id: number } | true>) => {
    try {
      const sent = await sending;
      if (sent === true) {
        // maybeDelivered: "resolve" — delivery unknown, the handler goes on.
        record.status = "failed";
        record.maybeDelivered = true;
        return;
      }
      record.messageId = sent.message_id;
      record.status = "delivered";
    } catch (error) {
      record.status = "failed";
      record.threw = true;
      record.maybeDelivered = mayHaveArrived(error, target);
    }
  };
  return {
    name: `grammY + @telepace/grammy${policy === undefined ? "" : ` [maybeDelivered: ${policy}]`}`,
    settings: {
      transformer:
        policy === undefined ? "telepace() defaults" : `telepace({ maybeDelivered: "${policy}" })`,
      clock: `Telegram time (×${target.scale})`,
    },
    counters,
    send: (record) =>
      outstanding.track(
        settle(record, api.sendMessage(record.chatId, record.text, undefined, signal)),
      ),
    edit(chatId, messageId, text) {
      counters.editsIssued = (counters.editsIssued ?? 0) + 1;
      api.editMessageText(chatId, messageId, text, undefined, signal).catch(() => {
        counters.editsFailed = (counters.editsFailed ?? 0) + 1;
      });
    },
    finish: (record, progressId) =>
      outstanding.track(
        settle(
          record,
          progressId === undefined
            ? api.sendMessage(record.chatId, record.text, undefined, signal)
            : replaceProgress(api, record.chatId, progressId, record.text, undefined, signal),
        ),
      ),
    // The progress deletes run after their final, inside the outbox: idle once it is empty.
    async idle() {
      await outstanding.idle();
      for (;;) {
        const { pending, inFlight } = pace.snapshot();
        if (pending + inFlight === 0) return;
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
    },
    close: () => pace.close({ drain: false, timeoutMs: 1_000 }),
  };
}

/** grammY's Api against the sim, with the transformers as their READMEs install them. */
export function grammyWriter(target: Target, recipe: GrammyRecipe): Writer {
  const api = new Api(target.token, { apiRoot: target.apiRoot });
  for (const name of recipe.install) {
    // auto-retry with its defaults: retry 429s after retry_after (already time-scaled by the
    // sim), 5xx and network errors with backoff, forever.
    api.config.use(
      name === "throttler"
        ? scaledThrottler(target.scale)
        : autoRetry({ rethrowHttpErrors: recipe.rethrowHttpErrors ?? false }),
    );
  }
  const signal = target.signal as unknown as GrammySignal;
  const outstanding = new Outstanding();
  const counters: Record<string, number> = { editsIssued: 0, editsFailed: 0, editsSkipped: 0 };
  // latest-only: per message, whether an edit is in flight and the newest text waiting for it.
  const editing = new Map<
    string,
    { inFlight: boolean; next: string | undefined; closed: boolean }
  >();

  const editNow = (chatId: number, messageId: number, text: string): Promise<unknown> => {
    counters.editsIssued = (counters.editsIssued ?? 0) + 1;
    return api.editMessageText(chatId, messageId, text, undefined, signal).catch(() => {
      counters.editsFailed = (counters.editsFailed ?? 0) + 1;
    });
  };
  const send = async (record: SendRecord): Promise<void> => {
    try {
      const message = await api.sendMessage(record.chatId, record.text, undefined, signal);
      record.status = "delivered";
      record.messageId = message.message_id;
    } catch (error) {
      record.status = "failed";
      record.threw = true;
      record.maybeDelivered = error instanceof HttpError && !target.signal.aborted;
    }
  };
  return {
    name: recipeName(recipe),
    settings: {
      install: recipe.install.join(" → "),
      edits: recipe.edits,
      rethrowHttpErrors: String(recipe.rethrowHttpErrors ?? false),
      scale: target.scale,
    },
    counters,
    send: (record) => outstanding.track(send(record)),
    edit(chatId, messageId, text) {
      if (recipe.edits !== "latest-only") {
        void editNow(chatId, messageId, text);
        return;
      }
      const key = `${chatId}:${messageId}`;
      let state = editing.get(key);
      if (state === undefined) {
        state = { inFlight: false, next: undefined, closed: false };
        editing.set(key, state);
      }
      if (state.closed) return;
      if (state.inFlight) {
        if (state.next !== undefined) counters.editsSkipped = (counters.editsSkipped ?? 0) + 1;
        state.next = text;
        return;
      }
      const loop = async (first: string, slot: NonNullable<typeof state>): Promise<void> => {
        slot.inFlight = true;
        let text: string | undefined = first;
        while (text !== undefined && !slot.closed && !target.signal.aborted) {
          await editNow(chatId, messageId, text);
          text = slot.next;
          slot.next = undefined;
        }
        slot.inFlight = false;
      };
      void loop(text, state);
    },
    async finish(record, progressId) {
      if (progressId !== undefined) {
        const state = editing.get(`${record.chatId}:${progressId}`);
        if (state !== undefined) {
          state.closed = true; // the author stops editing a message about to be replaced
          state.next = undefined;
        }
      }
      await outstanding.track(send(record));
      if (record.status === "delivered" && progressId !== undefined) {
        void outstanding.track(
          api.deleteMessage(record.chatId, progressId, signal).catch(() => false),
        );
      }
    },
    idle: () => outstanding.idle(),
    close: async () => {},
  };
}
