// Randomised schedules (fast-check, ManualClock) through the intake: batches arriving at random
// times, redeliveries, restarts on the same journal, tiny bounds, processors that succeed,
// reject, throw or hang past their timeout. Invariants: no update is lost; without a restart in
// the middle of its processing an update runs exactly once; per-principal order is arrival
// order; the bounds on updates in memory and on unfinished updates hold; the journal ends empty.

import type { Update } from "@grammyjs/types";
import { ManualClock } from "@telepace/core";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { MemoryUpdateJournal, UpdateIntake, type UpdateProcessor } from "../src/index.js";
import { groupMessage } from "./fixtures.js";
import { FakeTelegram, until } from "./intake-harness.js";

type Behaviour = "ok" | "reject" | "throw" | "hang";

type Step =
  | { readonly type: "arrive"; readonly principals: readonly number[] }
  | { readonly type: "redeliver"; readonly pick: number }
  | { readonly type: "advance"; readonly ms: number }
  | { readonly type: "restart"; readonly graceMs: number };

const TIMEOUT_MS = 40;

const stepArb: fc.Arbitrary<Step> = fc.oneof(
  fc.record({
    type: fc.constant("arrive" as const),
    principals: fc.array(fc.integer({ min: 0, max: 5 }), { minLength: 1, maxLength: 8 }),
  }),
  fc.record({
    type: fc.constant("arrive" as const),
    principals: fc.array(fc.integer({ min: 0, max: 5 }), { minLength: 1, maxLength: 8 }),
  }),
  fc.record({ type: fc.constant("redeliver" as const), pick: fc.nat() }),
  fc.record({ type: fc.constant("advance" as const), ms: fc.integer({ min: 0, max: 60 }) }),
  fc.record({ type: fc.constant("restart" as const), graceMs: fc.integer({ min: 0, max: 30 }) }),
);

const optionsArb = fc.record({
  maxUnfinished: fc.integer({ min: 1, max: 6 }),
  maxJournalUpdates: fc.integer({ min: 1, max: 12 }),
  pollLimit: fc.integer({ min: 1, max: 10 }),
  maxConcurrency: fc.integer({ min: 1, max: 4 }),
  maxQueuedPerPrincipal: fc.integer({ min: 1, max: 3 }),
  maxActivePrincipals: fc.integer({ min: 1, max: 4 }),
  maxWaitingEnqueues: fc.integer({ min: 1, max: 4 }),
});

const behaviourArb = fc.array(
  fc.record({
    behaviour: fc.constantFrom<Behaviour>("ok", "ok", "ok", "reject", "throw", "hang"),
    delayMs: fc.integer({ min: 0, max: 30 }),
  }),
  { minLength: 1, maxLength: 16 },
);

describe("UpdateIntake under random schedules", () => {
  it("loses nothing, runs each update once unless a restart caught it, keeps order", async () => {
    await fc.assert(
      fc.asyncProperty(
        optionsArb,
        fc.array(stepArb, { minLength: 1, maxLength: 40 }),
        behaviourArb,
        async (options, steps, behaviours) => {
          const clock = new ManualClock();
          const telegram = new FakeTelegram(clock);
          const journal = new MemoryUpdateJournal();
          const stored = new Set<number>();
          const append = journal.append.bind(journal);
          journal.append = async (updates) => {
            const result = await append(updates);
            for (const update of result.appended) stored.add(update.update_id);
            return result;
          };
          const starts = new Map<number, number>();
          const principalOf = new Map<number, number>();
          // Per generation (one intake) and principal, the ids in the order they started.
          let order = new Map<number, number[]>();
          const generations: Map<number, number[]>[] = [order];
          // Ids a restart caught unfinished: only these may run again.
          const interrupted = new Set<number>();
          const processor: UpdateProcessor = (update) => {
            const id = update.update_id;
            starts.set(id, (starts.get(id) ?? 0) + 1);
            const principal = principalOf.get(id) as number;
            order.set(principal, [...(order.get(principal) ?? []), id]);
            const { behaviour, delayMs } = behaviours[id % behaviours.length] ?? {
              behaviour: "ok",
              delayMs: 0,
            };
            if (behaviour === "throw") throw new Error("threw");
            if (behaviour === "hang") return new Promise(() => {});
            return clock.sleep(delayMs).then(() => {
              if (behaviour === "reject") throw new Error("rejected");
            });
          };
          const { maxUnfinished, maxJournalUpdates, pollLimit, ...dispatcher } = options;
          const start = () => {
            const intake = new UpdateIntake(processor, {
              getUpdates: telegram.getUpdates,
              clock,
              journal,
              maxUnfinished,
              maxJournalUpdates,
              pollLimit,
              pollTimeoutSeconds: 1,
              dispatcher: { ...dispatcher, timeoutMs: TIMEOUT_MS },
            });
            return { intake, running: intake.run() };
          };
          let current = start();
          const sent: Update[] = [];
          let nextId = 1;
          const checkBound = () => {
            const snapshot = current.intake.snapshot();
            expect(snapshot.unfinished).toBeLessThanOrEqual(maxJournalUpdates);
            expect(snapshot.inMemory).toBeLessThanOrEqual(maxUnfinished);
            expect(snapshot.inMemory + snapshot.backlog).toBeLessThanOrEqual(snapshot.unfinished);
          };

          for (const step of steps) {
            if (step.type === "arrive") {
              const batch = step.principals.map((principal) => {
                const id = nextId++;
                principalOf.set(id, principal);
                return groupMessage(id, -1, principal);
              });
              sent.push(...batch);
              telegram.push(...batch);
            } else if (step.type === "redeliver" && sent.length > 0) {
              const update = sent[step.pick % sent.length] as Update;
              if (stored.has(update.update_id)) {
                const result = await current.intake.accept(update);
                expect(["duplicate", "busy"]).toContain(result.status);
              }
            } else if (step.type === "advance") {
              await clock.advance(step.ms);
            } else if (step.type === "restart") {
              const closing = current.intake.close({ timeoutMs: step.graceMs });
              await clock.advance(step.graceMs);
              await closing;
              await current.running;
              for (const update of await journal.unfinished()) {
                if (starts.has(update.update_id)) interrupted.add(update.update_id);
              }
              order = new Map();
              generations.push(order);
              current = start();
            }
            await clock.flush();
            checkBound();
          }
          for (let round = 0; round < 400; round++) {
            if (starts.size === sent.length && current.intake.snapshot().unfinished === 0) break;
            await clock.advance(TIMEOUT_MS);
            checkBound();
          }
          await until(() => current.intake.snapshot().unfinished === 0);
          await current.intake.close({ timeoutMs: 0 });
          await current.running;

          expect(starts.size).toBe(sent.length); // nothing lost
          for (const [id, count] of starts) {
            if (!interrupted.has(id)) expect(count).toBe(1);
          }
          for (const generation of generations) {
            for (const ids of generation.values()) {
              expect(ids).toEqual([...ids].sort((x, y) => x - y));
            }
          }
          expect(await journal.unfinished()).toEqual([]);
          expect(Object.values(current.intake.snapshot().dispatcher.rejected)).toEqual([
            0, 0, 0, 0,
          ]);
        },
      ),
      { numRuns: 60 },
    );
  });
});
