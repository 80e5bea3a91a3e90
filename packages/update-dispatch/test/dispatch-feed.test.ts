// The hand-over to the dispatcher on its own, over a real dispatcher and a memory journal: what
// memory and a principal's queue do not take waits in the journal by id, comes back in order, and
// never holds back another principal; reads are batched, retried and checked.

import type { Update } from "@grammyjs/types";
import { ManualClock } from "@telepace/core";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { dispatcherAccess } from "../src/dispatcher/dispatcher-access.js";
import { MemoryUpdateJournal, UpdateDispatcher } from "../src/index.js";
import { DispatchFeed, type FeedJournal } from "../src/intake/dispatch-feed.js";
import { privateMessage } from "./fixtures.js";
import { recorder, settle } from "./harness.js";
import { until } from "./intake-harness.js";

interface Options {
  readonly maxInMemory: number;
  readonly maxQueuedPerPrincipal: number;
  readonly maxActivePrincipals?: number;
  readonly maxWaitingEnqueues?: number;
}

/** A feed over a dispatcher of `rec`'s processor, reading from a memory journal it spies on. */
async function feedFor(rec: ReturnType<typeof recorder>, options: Options) {
  const clock = new ManualClock();
  const dispatcher = new UpdateDispatcher(rec.processor, {
    clock,
    maxConcurrency: 8,
    maxQueuedPerPrincipal: options.maxQueuedPerPrincipal,
    maxActivePrincipals: options.maxActivePrincipals ?? 1_000,
    maxWaitingEnqueues: options.maxWaitingEnqueues ?? 1_024,
    dedupeWindow: 0,
  });
  const access = dispatcherAccess(dispatcher);
  const store = new MemoryUpdateJournal();
  const reads: number[][] = [];
  const missing: number[] = [];
  const failures: unknown[] = [];
  const control = { readsToFail: 0 };
  const journal: FeedJournal = {
    read: (ids) => {
      reads.push([...ids]);
      if (control.readsToFail-- > 0) return Promise.reject(new Error("cannot read"));
      return store.read(ids);
    },
    readFailed: (error) => failures.push(error),
    missing: (ids) => missing.push(...ids),
    later: (retry, delayMs) => {
      clock.setTimer(retry, delayMs);
    },
  };
  const feed = new DispatchFeed(
    access,
    journal,
    options.maxInMemory,
    options.maxQueuedPerPrincipal + 1,
  );
  access.onFinished((updateId, _outcome, keyId) => {
    feed.ended(keyId);
    void store.finish(updateId);
  });
  /** Stores updates in the journal and pushes them, as the intake does after an append. */
  const arrive = async (updates: Update[]): Promise<void> => {
    await store.append(updates);
    feed.push(updates);
  };
  return { clock, dispatcher, feed, store, reads, missing, failures, control, arrive };
}

const messages = (userId: number, ids: number[]): Update[] =>
  ids.map((id) => privateMessage(id, userId));
const range = (from: number, to: number): number[] =>
  Array.from({ length: to - from + 1 }, (_, index) => from + index);

describe("DispatchFeed", () => {
  it("keeps a principal beyond its queue in the journal, in order, while others go on", async () => {
    const rec = recorder();
    const first = rec.gate(1);
    const { feed, reads, arrive } = await feedFor(rec, {
      maxInMemory: 100,
      maxQueuedPerPrincipal: 4,
    });
    // User 7 sends 1…40 while its first update hangs; user 8 sends 41…45 after.
    await arrive(messages(7, range(1, 40)));
    await arrive(messages(8, range(41, 45)));
    await until(() => rec.finished.length === 5);
    expect(rec.finished).toEqual(range(41, 45)); // nobody waits behind user 7's backlog
    // User 7 holds its queue (1 running, 4 waiting); the other 35 wait in the journal only.
    expect(feed.inMemory).toBe(5);
    expect(feed.waiting).toBe(35);
    expect(reads).toEqual([]);
    first.resolve();
    await until(() => rec.finished.length === 45);
    const user7 = rec.started.filter((id) => id <= 40);
    expect(user7).toEqual(range(1, 40));
    // Read back when half its queue was free, never more than the queue takes.
    expect(reads.every((ids) => ids.length >= 1 && ids.length <= 5)).toBe(true);
    expect(reads.flat()).toEqual(range(6, 40));
    expect(feed).toMatchObject({ inMemory: 0, waiting: 0, readBack: 35 });
  });

  it("holds at most maxInMemory, reading the rest back in batches", async () => {
    const rec = recorder();
    const gates = range(1, 16).map((id) => rec.gate(id));
    const { feed, reads, arrive } = await feedFor(rec, {
      maxInMemory: 16,
      maxQueuedPerPrincipal: 32,
    });
    // 200 principals, one update each: memory takes 16, the journal keeps 184.
    await arrive(range(1, 200).map((id) => privateMessage(id, 1_000 + id)));
    await settle();
    expect(feed).toMatchObject({ inMemory: 16, waiting: 184 });
    expect(rec.started).toEqual(range(1, 8)); // maxConcurrency 8
    for (const gate of gates) gate.resolve();
    await until(() => rec.finished.length === 200);
    // A read waits for 16 / 8 = 2 free places (so it is never a read per update) and takes at
    // most what memory takes; oldest first.
    expect(reads.every((ids) => ids.length >= 2 && ids.length <= 16)).toBe(true);
    expect(reads.flat()).toEqual(range(17, 200));
    expect(rec.started).toEqual(range(1, 200));
  });

  it("reads back the principal whose oldest waiting update is oldest first", async () => {
    const rec = recorder();
    const gates = [rec.gate(1), rec.gate(2)];
    const { reads, arrive } = await feedFor(rec, { maxInMemory: 2, maxQueuedPerPrincipal: 8 });
    await arrive([privateMessage(1, 10), privateMessage(2, 20)]);
    // Memory is full: 3 (user 30), 4 (user 20), 5 (user 30), 6 (user 10) wait.
    await arrive([
      privateMessage(3, 30),
      privateMessage(4, 20),
      privateMessage(5, 30),
      privateMessage(6, 10),
    ]);
    gates[1]?.resolve();
    // One place is free at a time (update 1 holds the other): each read takes the oldest waiting
    // update of any principal.
    await until(() => rec.finished.length === 4 && reads.length === 4);
    expect(reads).toEqual([[3], [4], [5], [6]]);
    expect(rec.finished).toEqual([2, 3, 4, 5]); // 6 waits behind 1, its principal's
    gates[0]?.resolve();
    await until(() => rec.finished.length === 6);
  });

  it("puts a failed read back in line and tries it again after a delay, in order", async () => {
    const rec = recorder();
    const first = rec.gate(1);
    const { clock, feed, reads, failures, control, arrive } = await feedFor(rec, {
      maxInMemory: 100,
      maxQueuedPerPrincipal: 1,
    });
    await arrive(messages(7, range(1, 6)));
    control.readsToFail = 2;
    first.resolve();
    await until(() => failures.length === 1);
    // Nothing is read meanwhile, though update 2 finished and its principal has room again.
    await until(() => rec.finished.length === 2);
    expect(feed).toMatchObject({ inMemory: 0, waiting: 4 });
    expect(reads).toEqual([[3]]);
    await clock.advance(499);
    expect(reads).toHaveLength(1);
    await clock.advance(1);
    await until(() => failures.length === 2);
    await clock.advance(1_000);
    await until(() => rec.finished.length === 6);
    expect(rec.started).toEqual(range(1, 6));
    // Tried again with what its principal takes by then (its queue is empty).
    expect(reads.slice(0, 3)).toEqual([[3], [3, 4], [3, 4]]);
  });

  it("reports ids the journal no longer holds, and goes on with the rest", async () => {
    const rec = recorder();
    const first = rec.gate(1);
    const { store, missing, arrive } = await feedFor(rec, {
      maxInMemory: 100,
      maxQueuedPerPrincipal: 1,
    });
    await arrive(messages(7, range(1, 5)));
    await store.finish(4); // behind the feed's back
    first.resolve();
    await until(() => rec.finished.length === 4);
    await settle();
    expect(missing).toEqual([4]);
    expect(rec.started).toEqual([1, 2, 3, 5]);
  });

  it("keeps updates that cannot wait to become active in the journal until something finishes", async () => {
    const rec = recorder();
    const gates = [rec.gate(1), rec.gate(2)];
    const { feed, dispatcher, arrive } = await feedFor(rec, {
      maxInMemory: 100,
      maxQueuedPerPrincipal: 1,
      maxActivePrincipals: 1,
      maxWaitingEnqueues: 1,
    });
    // User 1 is active, user 2 waits to become active, users 3 and 4 wait in the journal.
    await arrive([1, 2, 3, 4].map((id) => privateMessage(id, id)));
    await settle();
    expect(dispatcher.snapshot()).toMatchObject({ activePrincipals: 1, waiting: 1 });
    expect(feed).toMatchObject({ inMemory: 2, waiting: 2 });
    gates[0]?.resolve();
    gates[1]?.resolve();
    await until(() => rec.finished.length === 4);
    expect(rec.started).toEqual([1, 2, 3, 4]);
    expect(Object.values(dispatcher.snapshot().rejected)).toEqual([0, 0, 0, 0]);
  });

  it("keeps per-principal order and its bounds over random arrivals and finishes", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.array(fc.integer({ min: 1, max: 4 }), { minLength: 1, maxLength: 12 }), {
          minLength: 1,
          maxLength: 12,
        }),
        fc.integer({ min: 1, max: 8 }),
        fc.integer({ min: 1, max: 3 }),
        fc.array(fc.nat(), { minLength: 1, maxLength: 30 }),
        async (batches, maxInMemory, maxQueued, releases) => {
          const rec = recorder();
          const { feed, arrive } = await feedFor(rec, {
            maxInMemory,
            maxQueuedPerPrincipal: maxQueued,
          });
          const userOf = new Map<number, number>();
          const gates = new Map<number, () => void>();
          let nextId = 1;
          let release = 0;
          for (const batch of batches) {
            const updates = batch.map((userId) => {
              const id = nextId++;
              userOf.set(id, userId);
              const gate = rec.gate(id);
              gates.set(id, () => gate.resolve());
              return privateMessage(id, userId);
            });
            await arrive(updates);
            await settle();
            expect(feed.inMemory).toBeLessThanOrEqual(maxInMemory);
            // Release one running update, picked at random.
            const running = rec.started.filter((id) => !rec.finished.includes(id));
            const pick =
              running[(releases[release++ % releases.length] as number) % running.length];
            if (pick !== undefined) gates.get(pick)?.();
          }
          for (const open of gates.values()) open();
          await until(() => rec.finished.length === nextId - 1);
          for (const userId of [1, 2, 3, 4]) {
            const ids = rec.started.filter((id) => userOf.get(id) === userId);
            expect(ids).toEqual([...ids].sort((a, b) => a - b));
          }
          expect(new Set(rec.started).size).toBe(nextId - 1);
          expect(feed).toMatchObject({ inMemory: 0, waiting: 0 });
        },
      ),
      { numRuns: 60 },
    );
  });
});
