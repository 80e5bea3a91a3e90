// Randomised schedules (fast-check, ManualClock): random arrivals, id orders, redeliveries,
// waits and aborts, processors that succeed, reject, throw, hang or ignore their signal.
// Invariants: per-key order, one processor per key, the global limit, every accepted update
// processed exactly once, the watermark never above unfinished work, nothing lost at close.

import type { Update } from "@grammyjs/types";
import { ManualClock } from "@telepace/core";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { dispatchKeyOf } from "../src/dispatcher/dispatch-key.js";
import {
  type CloseResult,
  type EnqueueResult,
  UpdateDispatcher,
  type UpdateProcessor,
} from "../src/index.js";
import { groupMessage, pollUpdate, privateMessage } from "./fixtures.js";

type Behaviour =
  | { readonly kind: "ok"; readonly delayMs: number }
  | { readonly kind: "reject"; readonly delayMs: number }
  | { readonly kind: "throw" | "throw-value" | "hang" | "stuck" };

type Step =
  | {
      readonly type: "enqueue";
      readonly principal: number;
      readonly behaviour: Behaviour;
      readonly wait: boolean;
      readonly abortAfterMs: number | undefined;
      readonly idRank: number;
    }
  | { readonly type: "advance"; readonly ms: number }
  | { readonly type: "redeliver"; readonly pick: number }
  | { readonly type: "close"; readonly timeoutMs: number };

interface Options {
  readonly maxConcurrency: number;
  readonly maxQueuedPerPrincipal: number;
  readonly maxActivePrincipals: number;
  readonly maxWaitingEnqueues: number;
}

const TIMEOUT_MS = 30;

const behaviourArb: fc.Arbitrary<Behaviour> = fc.oneof(
  fc.record({ kind: fc.constant("ok" as const), delayMs: fc.integer({ min: 0, max: 45 }) }),
  fc.record({ kind: fc.constant("reject" as const), delayMs: fc.integer({ min: 0, max: 20 }) }),
  fc.constantFrom(
    { kind: "throw" as const },
    { kind: "throw-value" as const },
    { kind: "hang" as const },
    { kind: "stuck" as const },
  ),
);

const enqueueArb = fc.record({
  type: fc.constant("enqueue" as const),
  principal: fc.integer({ min: 0, max: 5 }),
  behaviour: behaviourArb,
  wait: fc.boolean(),
  abortAfterMs: fc.option(fc.integer({ min: 1, max: 60 }), { nil: undefined }),
  idRank: fc.nat(1_000),
});

const baseStepArb: fc.Arbitrary<Step> = fc.oneof(
  { weight: 6, arbitrary: enqueueArb },
  {
    weight: 2,
    arbitrary: fc.record({
      type: fc.constant("advance" as const),
      ms: fc.integer({ min: 1, max: 40 }),
    }),
  },
  { weight: 1, arbitrary: fc.record({ type: fc.constant("redeliver" as const), pick: fc.nat() }) },
);

const optionsArb: fc.Arbitrary<Options> = fc.record({
  maxConcurrency: fc.integer({ min: 1, max: 3 }),
  maxQueuedPerPrincipal: fc.integer({ min: 1, max: 4 }),
  maxActivePrincipals: fc.integer({ min: 1, max: 4 }),
  maxWaitingEnqueues: fc.integer({ min: 1, max: 8 }),
});

/** Principals 0-3: private chats; 4: a user in a group; 5: Other. */
function makeUpdate(id: number, principal: number): Update {
  if (principal < 4) return privateMessage(id, principal + 1);
  if (principal === 4) return groupMessage(id, -100, 1);
  return pollUpdate(id);
}

/** Update ids follow `idRank` (ties by position): arrivals come in any id order. */
function assignIds(steps: readonly Step[]): Map<number, number> {
  const enqueues = steps.flatMap((step, index) =>
    step.type === "enqueue" ? [{ index, rank: step.idRank }] : [],
  );
  enqueues.sort((a, b) => a.rank - b.rank || a.index - b.index);
  return new Map(enqueues.map((entry, position) => [entry.index, position + 1]));
}

interface Offer {
  readonly id: number;
  readonly keyId: string | number;
  outcome: string | undefined;
}

/** Runs a schedule, checking invariants as it goes; returns what the final checks need. */
async function runSchedule(options: Options, steps: readonly Step[]) {
  const clock = new ManualClock();
  const violations: string[] = [];
  const behaviours = new Map<number, Behaviour>();
  const keyOfId = new Map<number, string | number>();
  const startCount = new Map<number, number>();
  const started: number[] = [];
  const live = new Set<number>(); // started, not settled and not abandoned, as the processor sees it
  let startedAfterClose = false;
  let closeResult: CloseResult | undefined;

  const processor: UpdateProcessor = (update, signal) => {
    const id = update.update_id;
    const keyId = keyOfId.get(id) ?? "?";
    if (closeResult !== undefined) startedAfterClose = true;
    if (live.size >= options.maxConcurrency) violations.push(`limit exceeded starting ${id}`);
    for (const other of live) {
      if (keyOfId.get(other) === keyId) violations.push(`${id} overlaps ${other} on ${keyId}`);
    }
    started.push(id);
    startCount.set(id, (startCount.get(id) ?? 0) + 1);
    live.add(id);
    signal.addEventListener("abort", () => live.delete(id), { once: true });
    const behaviour = behaviours.get(id) ?? { kind: "ok", delayMs: 0 };
    switch (behaviour.kind) {
      case "throw":
        live.delete(id);
        throw new Error(`update ${id}`);
      case "throw-value":
        live.delete(id);
        throw id;
      case "ok":
        return clock.sleep(behaviour.delayMs, { signal }).then(() => {
          live.delete(id);
        });
      case "reject":
        return clock.sleep(behaviour.delayMs, { signal }).then(() => {
          live.delete(id);
          return Promise.reject(`update ${id}`);
        });
      case "hang":
        return new Promise((_, reject) => {
          signal.addEventListener("abort", () => reject(signal.reason), { once: true });
        });
      case "stuck":
        return new Promise(() => {});
    }
  };

  const dispatcher = new UpdateDispatcher(processor, { ...options, clock, timeoutMs: TIMEOUT_MS });
  const heldLimit =
    options.maxWaitingEnqueues + options.maxActivePrincipals * (options.maxQueuedPerPrincipal + 1);
  const offers: Offer[] = [];
  // A model of held ids (withdrawn unprocessed and not offered again since), forgetting the
  // highest beyond the ledger's documented limit.
  const held = new Set<number>();
  const hold = (id: number): void => {
    held.add(id);
    if (held.size > heldLimit) held.delete(Math.max(...held));
  };
  const ids = assignIds(steps);
  const principalOfId = new Map<number, number>();

  const offer = (update: Update, wait: boolean, signal: AbortSignal | undefined): void => {
    const id = update.update_id;
    const earlier = offers.filter((entry) => entry.id === id);
    const isDuplicate = earlier.some(
      (entry) => entry.outcome === undefined || entry.outcome === "accepted",
    );
    const isOpen = !dispatcher.isClosed;
    if (isOpen && !isDuplicate) held.delete(id);
    const record: Offer = { id, keyId: dispatchKeyOf(update).id, outcome: undefined };
    offers.push(record);
    dispatcher.enqueue(update, { wait, signal }).then(
      (result: EnqueueResult) => {
        record.outcome = result.status === "rejected" ? `rejected:${result.reason}` : result.status;
        // A call still waiting when close() came holds like an abort; a call after close does not.
        if (result.status === "rejected" && result.reason === "closed" && isOpen) hold(id);
      },
      () => {
        record.outcome = "aborted";
        hold(id);
      },
    );
  };

  const checkWatermark = (): void => {
    const watermark = dispatcher.watermark;
    if (watermark === undefined) return;
    const finished = new Set(started.filter((id) => !live.has(id)));
    for (const entry of offers) {
      const unfinished =
        entry.outcome === undefined || (entry.outcome === "accepted" && !finished.has(entry.id));
      if (unfinished && watermark >= entry.id) {
        violations.push(`watermark ${watermark} passed unfinished ${entry.id}`);
      }
    }
    for (const id of held) {
      if (watermark >= id) violations.push(`watermark ${watermark} passed held ${id}`);
    }
  };

  let closing: Promise<void> | undefined;
  for (const [index, step] of steps.entries()) {
    if (step.type === "enqueue") {
      const id = ids.get(index) as number;
      const update = makeUpdate(id, step.principal);
      behaviours.set(id, step.behaviour);
      principalOfId.set(id, step.principal);
      keyOfId.set(id, dispatchKeyOf(update).id);
      let signal: AbortSignal | undefined;
      if (step.abortAfterMs !== undefined) {
        const controller = new AbortController();
        clock.setTimer(() => controller.abort(), step.abortAfterMs);
        signal = controller.signal;
      }
      offer(update, step.wait, signal);
    } else if (step.type === "redeliver") {
      // Telegram (or a webhook retry) delivers an earlier update again.
      const previous = offers[step.pick % Math.max(offers.length, 1)];
      const principal = previous === undefined ? undefined : principalOfId.get(previous.id);
      if (previous !== undefined && principal !== undefined) {
        offer(makeUpdate(previous.id, principal), false, undefined);
      }
    } else if (step.type === "advance") {
      await clock.advance(step.ms);
    } else if (closing === undefined) {
      closing = dispatcher.close({ timeoutMs: step.timeoutMs }).then((result) => {
        closeResult = result;
        for (const update of [...result.unstarted, ...result.interrupted]) hold(update.update_id);
      });
    }
    await clock.flush();
    checkWatermark();
  }
  await clock.runAll();
  checkWatermark();
  await closing;
  return {
    dispatcher,
    offers,
    started,
    startCount,
    held,
    violations,
    closeResult,
    startedAfterClose,
  };
}

function expectedWatermark(offers: readonly Offer[], held: ReadonlySet<number>) {
  const settled = offers
    .filter(
      (entry) =>
        entry.outcome === "accepted" ||
        (entry.outcome?.startsWith("rejected:") === true && entry.outcome !== "rejected:closed"),
    )
    .map((entry) => entry.id);
  if (settled.length === 0) return undefined;
  const highest = Math.max(...settled);
  return held.size === 0 ? highest : Math.min(highest, Math.min(...held) - 1);
}

describe("randomised schedules", () => {
  it("keep per-key order and the limits, and process every accepted update exactly once", async () => {
    await fc.assert(
      fc.asyncProperty(
        optionsArb,
        fc.array(baseStepArb, { minLength: 5, maxLength: 60, size: "max" }),
        async (options, steps) => {
          const run = await runSchedule(options, steps);
          expect(run.violations).toEqual([]);
          expect(run.offers.every((entry) => entry.outcome !== undefined)).toBe(true);

          const accepted = run.offers.filter((entry) => entry.outcome === "accepted");
          const acceptedIds = new Set(accepted.map((entry) => entry.id));
          // Exactly once: every accepted id started once; nothing else ever started.
          expect(accepted.length).toBe(acceptedIds.size);
          expect(new Set(run.started)).toEqual(acceptedIds);
          for (const count of run.startCount.values()) expect(count).toBe(1);
          // Per-key order: each key started its updates in the order they were accepted.
          const keys = new Set(accepted.map((entry) => entry.keyId));
          for (const keyId of keys) {
            const inCallOrder = accepted
              .filter((entry) => entry.keyId === keyId)
              .map((entry) => entry.id);
            const inStartOrder = run.started.filter((id) => inCallOrder.includes(id));
            expect(inStartOrder).toEqual(inCallOrder);
          }

          const stats = run.dispatcher.snapshot();
          expect(stats).toMatchObject({
            queued: 0,
            inFlight: 0,
            waiting: 0,
            activePrincipals: 0,
            accepted: accepted.length,
          });
          expect(stats.succeeded + stats.failed + stats.timedOut).toBe(accepted.length);
          expect(await run.dispatcher.drain({ timeoutMs: 0 })).toEqual({ status: "idle" });
          expect(run.dispatcher.watermark).toBe(expectedWatermark(run.offers, run.held));
        },
      ),
      { numRuns: 150 },
    );
  });

  it("lose nothing at close: every accepted update is finished, handed back or interrupted", async () => {
    const closeStepArb = fc.record({
      type: fc.constant("close" as const),
      timeoutMs: fc.integer({ min: 0, max: 40 }),
    });
    await fc.assert(
      fc.asyncProperty(
        optionsArb,
        fc.array(baseStepArb, { minLength: 5, maxLength: 40, size: "max" }),
        closeStepArb,
        fc.array(baseStepArb, { maxLength: 10, size: "max" }),
        async (options, before, close, after) => {
          const run = await runSchedule(options, [...before, close, ...after]);
          const result = run.closeResult;
          expect(result).toBeDefined();
          if (result === undefined) return;
          expect(run.violations).toEqual([]);
          expect(run.startedAfterClose).toBe(false);
          expect(run.offers.every((entry) => entry.outcome !== undefined)).toBe(true);

          const acceptedIds = run.offers
            .filter((entry) => entry.outcome === "accepted")
            .map((entry) => entry.id)
            .sort((a, b) => a - b);
          const unstarted = result.unstarted.map((update) => update.update_id);
          const interrupted = result.interrupted.map((update) => update.update_id);
          // Conservation: started and unstarted partition the accepted updates.
          expect([...run.started, ...unstarted].sort((a, b) => a - b)).toEqual(acceptedIds);
          for (const id of interrupted) expect(run.started).toContain(id);
          expect(result.status).toBe(
            unstarted.length + interrupted.length === 0 ? "drained" : "timed-out",
          );
          // The watermark stays below every leftover, so a poller gets them again.
          const watermark = run.dispatcher.watermark;
          for (const id of [...unstarted, ...interrupted]) {
            expect(watermark === undefined || watermark < id).toBe(true);
          }
          expect(run.dispatcher.snapshot()).toMatchObject({ queued: 0, inFlight: 0, waiting: 0 });
        },
      ),
      { numRuns: 100 },
    );
  });
});
