// Invariants over randomized schedules on the manual clock: rates per chat, per group window (with
// the send reserve) and globally (the global budget and the paid broadcasts' apart), 429 freezes honoured, per-chat order and no overlap, and exactly
// one outcome per op. One function, so every PacingStore (the in-memory one here, a shared one in
// its own package) passes the same properties.

import { ManualClock } from "@telepace/core";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  ForbiddenError,
  NetworkError,
  type OutboxOperation,
  type OutboxOutcome,
  type PacingStore,
  RetryAfterError,
  TelegramOutbox,
} from "../../src/index.js";

type Step =
  | { readonly kind: "ok" }
  | { readonly kind: "429"; readonly retryAfterMs: number }
  | { readonly kind: "transient" }
  | { readonly kind: "permanent" }
  | { readonly kind: "forbidden" };

interface OpSpec {
  readonly at: number;
  readonly chat: number | undefined;
  readonly priority: number;
  readonly paced: boolean;
  /** A paid broadcast: the paid-broadcast budget instead of the global one. */
  readonly paid: boolean;
  readonly latencyMs: number;
  readonly steps: readonly Step[];
  readonly key: string | undefined;
  /** Keys this op drops when enqueued (with shared keys `a`/`b`). */
  readonly supersedes: readonly string[];
  /** With `uniqueKeys`: drop the n-th earlier op (by index) of the same chat, for each n. */
  readonly dropsEarlier: readonly number[];
  /**
   * With `uniqueKeys`: once delivered, a follow-up op (id `specs.length + index`) is enqueued in
   * the same chat, dropping every other pending op of the chat (as replace-progress's delete does).
   */
  readonly followUp: boolean;
  readonly abortAfterMs: number | undefined;
}

const CHATS = [1, 2, 3, -10, -20, undefined] as const;
/** Every chat's minimum spacing (1 rps); a group's long-run rate is one request per 3 s. */
const CHAT_MS = 1_000;
const GROUP_MS = 3_000;

const retryable = fc.oneof(
  { weight: 3, arbitrary: fc.constant<Step>({ kind: "ok" }) },
  {
    weight: 2,
    arbitrary: fc
      .integer({ min: 0, max: 4_000 })
      .map<Step>((retryAfterMs) => ({ kind: "429", retryAfterMs })),
  },
  { weight: 1, arbitrary: fc.constant<Step>({ kind: "transient" }) },
);

function opSpec(options: {
  keys: boolean;
  terminal: boolean;
  aborts: boolean;
}): fc.Arbitrary<OpSpec> {
  const last = options.terminal
    ? fc.constantFrom<Step>({ kind: "ok" }, { kind: "permanent" }, { kind: "forbidden" })
    : fc.constant<Step>({ kind: "ok" });
  return fc.record({
    at: fc.integer({ min: 0, max: 6_000 }),
    chat: fc.constantFrom(...CHATS),
    priority: fc.integer({ min: 0, max: 2 }),
    // Mostly paced, sometimes a chat action.
    paced: fc.integer({ min: 0, max: 4 }).map((n) => n > 0),
    paid: fc.integer({ min: 0, max: 3 }).map((n) => n === 0),
    // Often within a margin, where each answer decides its own place of the second.
    latencyMs: fc.oneof(fc.integer({ min: 0, max: 150 }), fc.integer({ min: 0, max: 1_500 })),
    steps: fc
      .tuple(fc.array(retryable, { maxLength: 2 }), last)
      .map(([head, tail]) => [...head, tail]),
    key: options.keys
      ? fc.option(fc.constantFrom("a", "b"), { nil: undefined })
      : fc.constant(undefined),
    supersedes: options.keys ? fc.constantFrom<string[]>([], [], ["a"], ["b"]) : fc.constant([]),
    followUp: options.keys
      ? fc.constant(false)
      : fc.integer({ min: 0, max: 3 }).map((n) => n === 0),
    dropsEarlier: options.keys
      ? fc.constant([])
      : fc.oneof(fc.constant([]), fc.array(fc.integer({ min: 1, max: 3 }), { maxLength: 2 })),
    abortAfterMs: options.aborts
      ? fc.option(fc.integer({ min: 0, max: 3_000 }), { nil: undefined, freq: 4 })
      : fc.constant(undefined),
  });
}

/** The follow-up of op `id`: an immediate delete-like op in the same chat. */
function followUpSpec(specs: readonly OpSpec[], id: number): OpSpec {
  const parent = specs[id] as OpSpec;
  return { ...parent, priority: 1, steps: [{ kind: "ok" }], dropsEarlier: [], followUp: false };
}

/** Every op, follow-ups included: follow-up of op n has index `specs.length + n`. */
function withFollowUps(specs: readonly OpSpec[]): OpSpec[] {
  return [...specs, ...specs.map((_, id) => followUpSpec(specs, id))];
}

/** The ops that op `id` drops through `dropsEarlier`: earlier ops (by index) of its chat. */
function droppedBy(specs: readonly OpSpec[], id: number): number[] {
  if (id >= specs.length) {
    // A follow-up drops every other op of its chat.
    const chat = specs[id - specs.length]?.chat;
    return specs.flatMap((spec, index) =>
      spec.chat === chat && index !== id - specs.length ? [index] : [],
    );
  }
  const chat = specs[id]?.chat;
  const earlier = specs
    .map((spec, index) => ({ spec, index }))
    .filter(({ spec, index }) => index < id && spec.chat === chat)
    .map(({ index }) => index)
    .reverse();
  return (specs[id]?.dropsEarlier ?? []).flatMap((n) => {
    const target = earlier[n - 1];
    return target === undefined ? [] : [target];
  });
}

function errorFor(step: Step): unknown {
  switch (step.kind) {
    case "429":
      return new RetryAfterError(step.retryAfterMs);
    case "transient":
      return new NetworkError("lost", {
        method: "m",
        failure: "connection-lost",
        mayHaveReachedServer: true,
      });
    case "permanent":
      return new Error("permanent");
    case "forbidden":
      return new ForbiddenError({
        method: "m",
        errorCode: 403,
        description: "Forbidden: bot was blocked by the user",
      });
    case "ok":
      return undefined;
  }
}

type LogEvent =
  | { readonly type: "enqueue"; readonly id: number }
  | { readonly type: "start"; readonly id: number; readonly at: number }
  | { readonly type: "end"; readonly id: number; readonly at: number; readonly step: Step };

interface Run {
  readonly log: LogEvent[];
  readonly outcomes: Map<
    number,
    { outcome?: OutboxOutcome<unknown>; rejected?: unknown; at: number }
  >;
  readonly outbox: TelegramOutbox;
}

async function simulate(
  specs: readonly OpSpec[],
  config: {
    globalRps: number;
    paidRps: number;
    maxInFlight: number;
    groupBurst: number;
    sendReserve: number;
    pacingMarginMs: number;
    closeAt?: number | undefined;
    drain?: boolean;
    /** Give op n the key `k<n>`, so `supersedes` can name ops. */
    uniqueKeys?: boolean;
  },
  store: PropertyStore,
): Promise<Run> {
  const clock = new ManualClock();
  const outbox = new TelegramOutbox({
    clock,
    pacingStore: await store.pacingStore?.(),
    privateChatRps: 1,
    groupChatRps: 1 / 3,
    globalRps: config.globalRps,
    paidBroadcastRps: config.paidRps,
    maxInFlight: config.maxInFlight,
    groupBurst: config.groupBurst,
    sendReserve: config.sendReserve,
    pacingMarginMs: config.pacingMarginMs,
    maxAttempts: 50,
    retryBaseDelayMs: 200,
    retryMaxDelayMs: 800,
  });
  const log: LogEvent[] = [];
  const outcomes: Run["outcomes"] = new Map();
  const all = withFollowUps(specs);
  const operation = (id: number): OutboxOperation<unknown> => {
    const spec = all[id] as OpSpec;
    let attempt = 0;
    return {
      chatId: spec.chat,
      key: config.uniqueKeys ? `k${id}` : spec.key,
      supersedes: config.uniqueKeys
        ? droppedBy(specs, id).map((target) => `k${target}`)
        : spec.supersedes,
      priority: spec.priority,
      paced: spec.paced,
      paidBroadcast: spec.paid,
      idempotent: true,
      execute: async () => {
        const step = spec.steps[Math.min(attempt++, spec.steps.length - 1)] as Step;
        log.push({ type: "start", id, at: clock.now() });
        await clock.sleep(spec.latencyMs);
        log.push({ type: "end", id, at: clock.now(), step });
        const error = errorFor(step);
        if (error !== undefined) throw error;
        return id;
      },
      ...(config.uniqueKeys && spec.followUp
        ? {
            followUp: () => {
              log.push({ type: "enqueue", id: specs.length + id });
              return operation(specs.length + id);
            },
          }
        : {}),
    };
  };
  specs.forEach((spec, id) => {
    clock.setTimer(() => {
      const controller = new AbortController();
      if (spec.abortAfterMs !== undefined)
        clock.setTimer(() => controller.abort("aborted"), spec.abortAfterMs);
      log.push({ type: "enqueue", id });
      outbox.enqueue(operation(id), { signal: controller.signal }).then(
        (outcome) => outcomes.set(id, { outcome, at: clock.now() }),
        (rejected: unknown) => outcomes.set(id, { rejected, at: clock.now() }),
      );
    }, spec.at);
  });
  if (config.closeAt !== undefined) {
    clock.setTimer(
      () => void outbox.close({ drain: config.drain ?? true, timeoutMs: 5_000 }),
      config.closeAt,
    );
  }
  await (store.run ?? ((manual: ManualClock) => manual.runAll()))(clock);
  return { log, outcomes, outbox };
}

const specsFor = (spec: fc.Arbitrary<OpSpec>) => fc.array(spec, { minLength: 1, maxLength: 25 });
const config = fc.record({
  globalRps: fc.integer({ min: 1, max: 4 }),
  paidRps: fc.integer({ min: 1, max: 4 }),
  maxInFlight: fc.integer({ min: 1, max: 4 }),
  // Small bursts, so a run of a few seconds fills a group's window (3 s per place).
  groupBurst: fc.integer({ min: 1, max: 4 }),
  sendReserve: fc.integer({ min: 0, max: 3 }),
  pacingMarginMs: fc.constantFrom(0, 50, 100),
});

/**
 * The limits every run keeps, from its log: the global budget with its margin, each chat's
 * spacing, each group's window and send reserve, and every 429 freeze.
 */
function expectLimits(
  log: readonly LogEvent[],
  specs: readonly OpSpec[],
  cfg: {
    readonly globalRps: number;
    readonly paidRps: number;
    readonly groupBurst: number;
    readonly sendReserve: number;
    readonly pacingMarginMs: number;
  },
): void {
  const starts = log.filter((e): e is Extract<LogEvent, { type: "start" }> => e.type === "start");
  const at = (list: readonly { at: number }[], i: number) => (list[i] as { at: number }).at;
  // Global: a request reaches Telegram somewhere between its start and its end (however long
  // it took), so limit + 1 of them can meet in one Telegram second exactly when the last of them
  // to start starts less than a second after the earliest end among them. For each request as
  // that last one, the others are best chosen as the `limit` latest-ending ones started before it.
  const endOf = (startIndex: number): number => {
    const start = log.indexOf(starts[startIndex] as LogEvent);
    const end = log.slice(start).find((e) => e.type === "end" && e.id === starts[startIndex]?.id);
    return end === undefined ? Number.POSITIVE_INFINITY : (end as { at: number }).at;
  };
  // Each budget on its own: paid broadcasts at paidRps, everything else at globalRps.
  for (const [paid, limit] of [
    [false, cfg.globalRps],
    [true, cfg.paidRps],
  ] as const) {
    const indexes = starts.flatMap((s, i) => ((specs[s.id]?.paid ?? false) === paid ? [i] : []));
    indexes.forEach((last, k) => {
      if (k < limit) return;
      const ends = indexes
        .slice(0, k)
        .map(endOf)
        .sort((x, y) => y - x);
      const earliestOfLatest = ends[limit - 1] as number;
      expect(at(starts, last)).toBeGreaterThanOrEqual(earliestOfLatest + 1_000);
    });
  }
  const windowMs = cfg.groupBurst * GROUP_MS + cfg.pacingMarginMs;
  const editRoom = Math.max(1, cfg.groupBurst - cfg.sendReserve);
  for (const chat of CHATS) {
    if (chat === undefined) continue;
    const paced = starts.filter((s) => specs[s.id]?.chat === chat && specs[s.id]?.paced);
    // Every chat: paced starts at least a second apart.
    for (let i = 1; i < paced.length; i++) {
      expect(at(paced, i) - at(paced, i - 1)).toBeGreaterThanOrEqual(CHAT_MS);
    }
    if (chat > 0) continue;
    paced.forEach((start, i) => {
      // Groups: at most groupBurst in any window; an edit only while the reserve is free.
      const inWindow = paced.slice(0, i).filter((s) => s.at > start.at - windowMs).length;
      expect(inWindow).toBeLessThan(cfg.groupBurst);
      if ((specs[start.id]?.priority ?? 0) >= 2) expect(inWindow).toBeLessThan(editRoom);
    });
  }
  // Freezes: after a 429 nothing starts in its scope until retry_after has passed.
  log.forEach((end, index) => {
    if (end.type !== "end" || end.step.kind !== "429") return;
    const chat = specs[end.id]?.chat;
    const until = end.at + end.step.retryAfterMs;
    const violating = log
      .slice(index + 1)
      .filter(
        (s) =>
          s.type === "start" && s.at < until && (chat === undefined || specs[s.id]?.chat === chat),
      );
    expect(violating).toEqual([]);
  });
}

/** The store under test, and how its runs are driven. */
export interface PropertyStore {
  /** A fresh store per run; the outbox's default (in memory) when absent. */
  readonly pacingStore?: () => PacingStore | Promise<PacingStore>;
  /**
   * Runs the clock until nothing is left to do; `clock.runAll()` when absent. A store that answers
   * over real I/O must let its answers land before time moves on.
   */
  readonly run?: (clock: ManualClock) => Promise<void>;
  /** Multiplies every property's number of runs. @defaultValue 1 */
  readonly runsScale?: number;
}

/** The scheduling properties every PacingStore must keep, as a vitest suite named `name`. */
export function describePacingProperties(name: string, store: PropertyStore = {}): void {
  const runs = (n: number) => ({ numRuns: Math.max(1, Math.round(n * (store.runsScale ?? 1))) });
  describe(name, () => {
    it("never exceeds the per-chat spacing, a group's window and reserve or the global budget, and honours every 429 freeze", async () => {
      await fc.assert(
        fc.asyncProperty(
          specsFor(opSpec({ keys: false, terminal: false, aborts: false })),
          config,
          async (specs, cfg) => {
            const { log } = await simulate(specs, cfg, store);
            expectLimits(log, specs, cfg);
          },
        ),
        runs(150),
      );
    });

    it("keeps every limit while ops are aborted, superseded and closed: a reserved slot is used or wasted, never granted twice", async () => {
      await fc.assert(
        fc.asyncProperty(
          specsFor(opSpec({ keys: true, terminal: false, aborts: true })),
          config,
          fc.option(fc.integer({ min: 0, max: 8_000 }), { nil: undefined }),
          fc.boolean(),
          async (specs, cfg, closeAt, drain) => {
            const { log, outbox } = await simulate(specs, { ...cfg, closeAt, drain }, store);
            if (closeAt === undefined) await outbox.close();
            expectLimits(log, specs, cfg);
          },
        ),
        runs(100),
      );
    });

    it("one chat never has two requests in flight and always runs its best pending op, retries in place", async () => {
      await fc.assert(
        fc.asyncProperty(
          specsFor(opSpec({ keys: false, terminal: false, aborts: false })),
          config,
          async (specs, cfg) => {
            const { log } = await simulate(specs, { ...cfg, uniqueKeys: true }, store);
            const all = withFollowUps(specs);
            // Replay the log against a model of each chat's pending set.
            const chatOf = (id: number) => all[id]?.chat ?? `none:${id}`;
            const pending = new Map<number | string, Set<number>>();
            const busy = new Set<number | string>();
            // (priority, queued_at): the enqueue order stands for queued_at and never changes.
            const queuedOrder = new Map<number, number>();
            const place = (id: number) =>
              [all[id]?.priority ?? 0, queuedOrder.get(id) ?? 0] as const;
            for (const event of log) {
              const chat = chatOf(event.id);
              const set = pending.get(chat) ?? new Set<number>();
              pending.set(chat, set);
              if (event.type === "enqueue") {
                // Dropped: pending ops of its chat (chat-less: of the named key) it supersedes.
                for (const target of droppedBy(specs, event.id))
                  pending.get(chatOf(target))?.delete(target);
                queuedOrder.set(event.id, queuedOrder.size);
                set.add(event.id);
              }
              if (event.type === "start") {
                expect(busy.has(chat)).toBe(false);
                busy.add(chat);
                const best = [...set].sort((a, b) => {
                  const [pa, ia] = place(a);
                  const [pb, ib] = place(b);
                  return pa - pb || ia - ib;
                })[0];
                expect(event.id).toBe(best);
                set.delete(event.id);
              }
              if (event.type === "end") {
                busy.delete(chat);
                if (event.step.kind === "429" || event.step.kind === "transient") set.add(event.id);
              }
            }
          },
        ),
        runs(500),
      );
    });

    it("every enqueued op gets exactly one outcome, whatever happens (coalescing, failures, aborts, close)", async () => {
      await fc.assert(
        fc.asyncProperty(
          specsFor(opSpec({ keys: true, terminal: true, aborts: true })),
          config,
          fc.option(fc.integer({ min: 0, max: 8_000 }), { nil: undefined }),
          fc.boolean(),
          async (specs, cfg, closeAt, drain) => {
            const { log, outcomes, outbox } = await simulate(
              specs,
              { ...cfg, closeAt, drain },
              store,
            );
            if (closeAt === undefined) await outbox.close();
            const enqueued = log.filter((e) => e.type === "enqueue").map((e) => e.id);
            expect(enqueued.length).toBe(specs.length);
            for (const id of enqueued) expect(outcomes.has(id)).toBe(true);
            // Nothing runs after its op settled, and a delivered op's last attempt succeeded.
            for (const [id, settled] of outcomes) {
              const attempts = log.filter((e) => e.id === id && e.type === "start");
              for (const start of attempts)
                expect((start as { at: number }).at).toBeLessThanOrEqual(settled.at);
              if (settled.outcome?.status === "delivered" && !settled.outcome.notModified) {
                expect(settled.outcome.result).toBe(id);
                const ends = log.filter((e) => e.id === id && e.type === "end");
                expect(ends.at(-1)).toMatchObject({ step: { kind: "ok" } });
                expect(settled.outcome.attempts).toBe(attempts.length);
              }
              if (settled.rejected !== undefined) expect(settled.rejected).toBe("aborted");
              // close() bounds the wait: nothing settles after its deadline (5 s after the call).
              if (closeAt !== undefined) {
                expect(settled.at).toBeLessThanOrEqual(
                  Math.max(specs[id]?.at ?? 0, closeAt + 5_000),
                );
              }
            }
            const snapshot = outbox.snapshot();
            expect(snapshot).toMatchObject({ state: "closed", pending: 0, inFlight: 0 });
            const count = (status: string) =>
              [...outcomes.values()].filter((o) => o.outcome?.status === status).length;
            expect(snapshot.counters).toMatchObject({
              delivered: count("delivered"),
              failed: count("failed"),
              superseded: count("superseded"),
              closed: count("closed"),
              rejected: count("rejected"),
              aborted: [...outcomes.values()].filter((o) => o.rejected !== undefined).length,
            });
          },
        ),
        runs(200),
      );
    });
  });
}
