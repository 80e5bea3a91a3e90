// What every BroadcastStore answers, asked directly: one suite, so the journal store (over a file
// journal or a Map) and the Redis store (in its own package) are held to the same contract.

import { describe, expect, it } from "vitest";
import type { BroadcastStore } from "../../src/index.js";

/** A store under test, and another handle on the same data (another or a restarted process). */
export interface StoreUnderTest {
  readonly store: BroadcastStore;
  readonly another: () => BroadcastStore;
}

const definition = { fingerprint: "f1", batchSize: 3, end: undefined };

/** The contract as a vitest suite named `name`; `make` gives a fresh, empty store. */
export function describeBroadcastStoreContract(
  name: string,
  make: () => StoreUnderTest | Promise<StoreUnderTest>,
): void {
  let ids = 0;
  const fresh = async () => ({ ...(await make()), id: `contract-${++ids}` });

  describe(name, () => {
    it("creates a broadcast once and refuses another message under its id", async () => {
      const { store, id } = await fresh();
      expect(await store.read(id)).toBeUndefined();
      const created = await store.open(id, definition);
      expect(created).toMatchObject({
        id,
        fingerprint: "f1",
        batchSize: 3,
        state: "running",
        end: undefined,
        nextBatch: 0,
        openBatches: 0,
        counts: { sent: 0, failed: 0, resentAfterCrash: 0 },
      });
      expect(await store.open(id, { ...definition, batchSize: 9 })).toMatchObject({ batchSize: 3 });
      await expect(store.open(id, { ...definition, fingerprint: "f2" })).rejects.toMatchObject({
        code: "ERR_BROADCAST_CONFLICT",
      });
    });

    it("hands out batches in order; a finished batch's outcomes join the counts and its records go", async () => {
      const { store, id } = await fresh();
      await store.open(id, { ...definition, end: 5 });
      const first = await store.claim(id, "w", 60_000);
      const second = await store.claim(id, "w", 60_000);
      expect(first).toMatchObject({ status: "claimed", claim: { batch: 0, from: 0, to: 3 } });
      expect(second).toMatchObject({ status: "claimed", claim: { batch: 1, from: 3, to: 6 } });
      if (first.status !== "claimed" || second.status !== "claimed") return;
      expect(first.claim.recorded.size).toBe(0);
      // Recipients end at 5: no third batch, and none is left to claim while both are open.
      expect(await store.claim(id, "w", 60_000)).toMatchObject({ status: "wait" });
      for (const position of [0, 1, 2]) await store.markStarted(first.claim, position);
      await store.markSettled(first.claim, 0, "sent");
      await store.markSettled(first.claim, 1, "blocked");
      await store.markSettled(first.claim, 2, "sent+m+r");
      const after = await store.complete(first.claim, undefined);
      expect(after).toMatchObject({
        state: "running",
        openBatches: 1,
        counts: { sent: 2, blocked: 1, migrated: 1, resentAfterCrash: 1 },
      });
      await store.markStarted(second.claim, 3);
      await store.markUnsent(second.claim, 3);
      await store.markStarted(second.claim, 3);
      await store.markSettled(second.claim, 3, "chat-not-found");
      await store.markSettled(second.claim, 4, "maybe-delivered");
      const done = await store.complete(second.claim, 5);
      expect(done).toMatchObject({
        state: "completed",
        end: 5,
        openBatches: 0,
        counts: { sent: 2, blocked: 1, chatNotFound: 1, maybeDelivered: 1 },
      });
      expect(await store.claim(id, "w", 60_000)).toMatchObject({
        status: "stopped",
        record: { state: "completed" },
      });
    });

    it("learns where the recipients end from the batch they end in", async () => {
      const { store, id } = await fresh();
      await store.open(id, definition);
      const claimed = await store.claim(id, "w", 60_000);
      if (claimed.status !== "claimed") throw new Error("not claimed");
      await store.markSettled(claimed.claim, 0, "sent");
      const record = await store.complete(claimed.claim, 1);
      expect(record).toMatchObject({ state: "completed", end: 1, counts: { sent: 1 } });
    });

    it("gives a released batch to the next claim, with what was recorded in it", async () => {
      const { store, another, id } = await fresh();
      await store.open(id, definition);
      const claimed = await store.claim(id, "w1", 60_000);
      if (claimed.status !== "claimed") throw new Error("not claimed");
      await store.markStarted(claimed.claim, 0);
      await store.markSettled(claimed.claim, 0, "sent");
      await store.markStarted(claimed.claim, 1);
      await store.release(claimed.claim);
      const other = another();
      const taken = await other.claim(id, "w2", 60_000);
      expect(taken).toMatchObject({ status: "claimed", claim: { batch: 0, from: 0 } });
      if (taken.status !== "claimed") return;
      expect([...taken.claim.recorded].sort()).toEqual([
        [0, "sent"],
        [1, "s"],
      ]);
      // The old claim can no longer write.
      await expect(store.markSettled(claimed.claim, 1, "sent")).rejects.toMatchObject({
        code: "ERR_BROADCAST_LEASE_LOST",
      });
      await expect(store.complete(claimed.claim, undefined)).rejects.toMatchObject({
        code: "ERR_BROADCAST_LEASE_LOST",
      });
      expect(await store.renew(claimed.claim, 60_000)).toBe(false);
      expect(await other.renew(taken.claim, 60_000)).toBe(true);
    });

    it("pauses, runs again and cancels for good", async () => {
      const { store, id } = await fresh();
      await store.open(id, definition);
      expect(await store.setState(id, "paused")).toMatchObject({ state: "paused" });
      expect(await store.claim(id, "w", 60_000)).toMatchObject({
        status: "stopped",
        record: { state: "paused" },
      });
      await store.setState(id, "running");
      expect(await store.claim(id, "w", 60_000)).toMatchObject({ status: "claimed" });
      await store.setState(id, "cancelled");
      expect(await store.setState(id, "running")).toMatchObject({ state: "cancelled" });
      expect(await store.claim(id, "w", 60_000)).toMatchObject({ status: "stopped" });
    });
  });
}
