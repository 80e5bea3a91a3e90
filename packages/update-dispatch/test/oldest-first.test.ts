// The ready queue: a free processor slot takes the principal whose oldest waiting update was
// enqueued first, per-principal FIFO holds, and no slot idles while work is ready. Checked on
// the dispatcher's own diagnostics events (published synchronously where each thing happens)
// over random schedules driven by a ManualClock.

import { ManualClock } from "@telepace/core";
import { recordChannels } from "@telepace/testing";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { dispatchKeyOf } from "../src/dispatcher/dispatch-key.js";
import {
  type UpdateDispatchEvent,
  UpdateDispatcher,
  type UpdateProcessor,
  updateDispatchChannels,
} from "../src/index.js";
import { groupMessage, pollUpdate, privateMessage } from "./fixtures.js";
import { recorder, settle } from "./harness.js";

describe("oldest work first", () => {
  it("a slot goes to the oldest waiting update, not to the principal that asked first", async () => {
    const rec = recorder();
    const dispatcher = new UpdateDispatcher(rec.processor, { maxConcurrency: 1 });
    const gate = rec.gate(1);
    // User 42 has 1 running and 2, 3 queued; user 77's 4 arrives after them.
    for (const [id, userId] of [
      [1, 42],
      [2, 42],
      [3, 42],
      [4, 77],
    ] as const) {
      await dispatcher.enqueue(privateMessage(id, userId));
    }
    await settle();
    gate.resolve();
    await dispatcher.drain();
    // Round robin over principals would give [1, 4, 2, 3]: 77 asked for a slot before 42 asked
    // again. The oldest waiting update is 2, then 3, so 77 waits for work older than its own.
    expect(rec.started).toEqual([1, 2, 3, 4]);
  });

  it("a principal with older work overtakes principals that became ready before it", async () => {
    const rec = recorder();
    const dispatcher = new UpdateDispatcher(rec.processor, { maxConcurrency: 2 });
    const gates = [rec.gate(1), rec.gate(2), rec.gate(3)];
    for (const [id, userId] of [
      [1, 1],
      [2, 2],
      [3, 1],
      [4, 3],
      [5, 4],
    ] as const) {
      await dispatcher.enqueue(privateMessage(id, userId));
    }
    await settle();
    expect(rec.started).toEqual([1, 2]);
    gates[0]?.resolve(); // user 1's next update, 3, is older than 4 and 5
    await settle();
    expect(rec.started).toEqual([1, 2, 3]);
    for (const gate of gates) gate.resolve();
    await dispatcher.drain();
    expect(rec.started).toEqual([1, 2, 3, 4, 5]);
  });
});

type Behaviour =
  | { readonly kind: "ok" | "reject"; readonly delayMs: number }
  | { readonly kind: "throw" | "hang" };

type Step =
  | {
      readonly type: "enqueue";
      readonly principal: number;
      readonly behaviour: Behaviour;
      readonly wait: boolean;
      readonly abortAfterMs: number | undefined;
    }
  | { readonly type: "advance"; readonly ms: number };

const TIMEOUT_MS = 25;

const stepArb: fc.Arbitrary<Step> = fc.oneof(
  {
    weight: 5,
    arbitrary: fc.record({
      type: fc.constant("enqueue" as const),
      principal: fc.integer({ min: 0, max: 6 }),
      behaviour: fc.oneof(
        fc.record({
          kind: fc.constantFrom("ok" as const, "reject" as const),
          delayMs: fc.integer({ min: 0, max: 30 }),
        }),
        fc.constantFrom({ kind: "throw" as const }, { kind: "hang" as const }),
      ),
      wait: fc.boolean(),
      abortAfterMs: fc.option(fc.integer({ min: 1, max: 40 }), { nil: undefined }),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      type: fc.constant("advance" as const),
      ms: fc.integer({ min: 1, max: 20 }),
    }),
  },
);

/** Principals 0-3: private chats; 4-5: users in a group; 6: Other. */
function makeUpdate(id: number, principal: number) {
  if (principal < 4) return privateMessage(id, principal + 1);
  if (principal < 6) return groupMessage(id, -100, principal);
  return pollUpdate(id);
}

interface PrincipalModel {
  /** Accepted, not started, in acceptance order. */
  readonly queue: number[];
  isRunning: boolean;
}

describe("randomised schedules (ready queue)", () => {
  it("serve the oldest waiting update first, keep per-principal order and leave no slot idle", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.record({
          maxConcurrency: fc.integer({ min: 1, max: 3 }),
          maxQueuedPerPrincipal: fc.integer({ min: 1, max: 4 }),
          maxActivePrincipals: fc.integer({ min: 1, max: 7 }),
          maxWaitingEnqueues: fc.integer({ min: 1, max: 8 }),
        }),
        fc.array(stepArb, { minLength: 5, maxLength: 60, size: "max" }),
        async (options, steps) => {
          const clock = new ManualClock();
          const violations: string[] = [];
          const behaviours = new Map<number, Behaviour>();
          const keyOf = new Map<number, string | number>();
          const seqOf = new Map<number, number>();
          const principals = new Map<string | number, PrincipalModel>();
          const model = (keyId: string | number): PrincipalModel => {
            let entry = principals.get(keyId);
            if (entry === undefined) {
              entry = { queue: [], isRunning: false };
              principals.set(keyId, entry);
            }
            return entry;
          };
          let running = 0;
          let startedCount = 0;
          let acceptedCount = 0;

          const onEvent = (event: UpdateDispatchEvent): void => {
            const id = event.updateId as number;
            const self = model(keyOf.get(id) as string);
            if (event.type === "accepted") {
              acceptedCount++;
              self.queue.push(id);
            } else if (event.type === "started") {
              startedCount++;
              if (self.isRunning) violations.push(`${id} started while its principal ran`);
              if (self.queue[0] !== id) violations.push(`${id} overtook ${self.queue[0]}`);
              if (running >= options.maxConcurrency) violations.push(`limit exceeded by ${id}`);
              for (const [keyId, other] of principals) {
                const head = other.queue[0];
                if (other === self || other.isRunning || head === undefined) continue;
                if ((seqOf.get(head) as number) < (seqOf.get(id) as number)) {
                  violations.push(`${id} started before older ${head} of ${keyId}`);
                }
              }
              self.queue.shift();
              self.isRunning = true;
              running++;
            } else if (event.type === "finished") {
              self.isRunning = false;
              running--;
            }
          };
          using _events = recordChannels(updateDispatchChannels, onEvent);

          const processor: UpdateProcessor = (update, signal) => {
            const behaviour = behaviours.get(update.update_id) as Behaviour;
            switch (behaviour.kind) {
              case "throw":
                throw new Error("boom");
              case "hang":
                return new Promise(() => {});
              case "ok":
                return clock.sleep(behaviour.delayMs, { signal });
              case "reject":
                return clock
                  .sleep(behaviour.delayMs, { signal })
                  .then(() => Promise.reject(new Error("failed")));
            }
          };
          const dispatcher = new UpdateDispatcher(processor, {
            ...options,
            clock,
            timeoutMs: TIMEOUT_MS,
          });

          const checkNoIdleSlot = (): void => {
            if (running >= options.maxConcurrency) return;
            for (const [keyId, entry] of principals) {
              if (!entry.isRunning && entry.queue.length > 0) {
                violations.push(`slot idle while ${keyId} has ${entry.queue[0]} ready`);
              }
            }
          };

          let nextId = 1;
          for (const step of steps) {
            if (step.type === "enqueue") {
              const id = nextId++;
              const update = makeUpdate(id, step.principal);
              behaviours.set(id, step.behaviour);
              keyOf.set(id, dispatchKeyOf(update).id);
              seqOf.set(id, id); // every call here gets the next sequence number
              let signal: AbortSignal | undefined;
              if (step.abortAfterMs !== undefined) {
                const controller = new AbortController();
                clock.setTimer(() => controller.abort(), step.abortAfterMs);
                signal = controller.signal;
              }
              dispatcher.enqueue(update, { wait: step.wait, signal }).catch(() => {});
            } else {
              await clock.advance(step.ms);
            }
            await clock.flush();
            checkNoIdleSlot();
          }
          await clock.runAll();
          checkNoIdleSlot();
          expect(violations).toEqual([]);
          expect(await dispatcher.drain({ timeoutMs: 0 })).toEqual({ status: "idle" });
          expect(startedCount).toBe(acceptedCount);
          expect(dispatcher.snapshot()).toMatchObject({ queued: 0, inFlight: 0, waiting: 0 });
        },
      ),
      { numRuns: 200 },
    );
  });
});
