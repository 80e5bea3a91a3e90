// What every PacingStore answers, asked directly with explicit times: one function, so the
// in-memory store and a shared one (in its own package) are held to the same contract.

import { describe, expect, it } from "vitest";
import type { PacingDecision, PacingRequest, PacingStore } from "../../src/index.js";

export const request = (overrides: Partial<PacingRequest>): PacingRequest => ({
  chatKey: "1",
  intervalMs: 0,
  chatLimit: 0,
  chatWindowMs: 0,
  chatReserve: 0,
  paced: true,
  globalLimit: 0,
  globalWindowMs: 1_000,
  nowMs: 0,
  ...overrides,
});

/**
 * The contract as a vitest suite named `name`. `makeStore` gives a fresh, empty store that reads
 * time from the request's `nowMs`.
 */
export function describePacingStoreContract(
  name: string,
  makeStore: () => PacingStore | Promise<PacingStore>,
): void {
  describe(name, () => {
    let store: PacingStore;
    const acquire = async (overrides: Partial<PacingRequest>): Promise<PacingDecision> =>
      store.acquire(request(overrides));
    const fresh = async () => {
      store = await makeStore();
    };

    it("grants at most globalLimit starts in any window and says when the next fits", async () => {
      await fresh();
      const at = (nowMs: number) => acquire({ chatKey: undefined, globalLimit: 3, nowMs });
      for (const nowMs of [0, 100, 200]) expect(await at(nowMs)).toEqual({ granted: true });
      expect(await at(500)).toEqual({ granted: false, waitMs: 500, reason: "global-budget" });
      expect(await at(999)).toEqual({ granted: false, waitMs: 1, reason: "global-budget" });
      expect(await at(1_000)).toEqual({ granted: true });
      expect(await at(1_050)).toEqual({ granted: false, waitMs: 50, reason: "global-budget" });
    });

    it("keeps starts for the longest global window asked about, and counts those in each request's", async () => {
      await fresh();
      const at = (nowMs: number, globalWindowMs: number) =>
        acquire({ chatKey: undefined, globalLimit: 2, globalWindowMs, nowMs });
      expect(await at(0, 1_100)).toEqual({ granted: true });
      expect(await at(0, 1_100)).toEqual({ granted: true });
      expect(await at(1_050, 1_100)).toEqual({
        granted: false,
        waitMs: 50,
        reason: "global-budget",
      });
      // A shorter window (a smaller margin) does not see the starts at 0…
      expect(await at(1_050, 1_000)).toEqual({ granted: true });
      // …but they were kept: the longer window, asked again, still does.
      expect(await at(1_060, 1_100)).toEqual({
        granted: false,
        waitMs: 40,
        reason: "global-budget",
      });
    });

    it("paces a chat from each start; unpaced requests neither wait for nor take the slot", async () => {
      await fresh();
      expect(await acquire({ intervalMs: 1_000, nowMs: 0 })).toEqual({ granted: true });
      expect(await acquire({ intervalMs: 1_000, nowMs: 400 })).toEqual({
        granted: false,
        waitMs: 600,
        reason: "chat-paced",
      });
      expect(await acquire({ intervalMs: 1_000, paced: false, nowMs: 400 })).toEqual({
        granted: true,
      });
      expect(await acquire({ intervalMs: 1_000, nowMs: 1_000 })).toEqual({ granted: true });
      expect(await acquire({ chatKey: "2", intervalMs: 1_000, nowMs: 1_000 })).toEqual({
        granted: true,
      });
    });

    it("freezes a chat or everything; a shorter freeze never shortens a longer one", async () => {
      await fresh();
      await store.freeze("1", 5_000, 0);
      await store.freeze("1", 1_000, 0);
      expect(await acquire({ paced: false, nowMs: 4_000 })).toEqual({
        granted: false,
        waitMs: 1_000,
        reason: "chat-frozen",
      });
      expect(await acquire({ chatKey: "2", nowMs: 4_000 })).toEqual({ granted: true });
      await store.freeze(undefined, 2_000, 4_000);
      expect(await acquire({ chatKey: "2", nowMs: 5_000 })).toEqual({
        granted: false,
        waitMs: 1_000,
        reason: "global-frozen",
      });
      expect(await acquire({ chatKey: undefined, nowMs: 6_000 })).toEqual({ granted: true });
    });

    it("denies without recording: a refused request takes no slot anywhere", async () => {
      await fresh();
      await store.freeze("1", 1_000, 0);
      const global = { globalLimit: 1 };
      expect((await acquire({ ...global, nowMs: 0 })).granted).toBe(false);
      expect((await acquire({ ...global, chatKey: "2", nowMs: 0 })).granted).toBe(true);
    });

    it("holds a chat to its sliding window; a request with a reserve leaves the rest for others", async () => {
      await fresh();
      const group = { chatKey: "-1", intervalMs: 1_000, chatLimit: 3, chatWindowMs: 10_000 };
      const send = (nowMs: number) => acquire({ ...group, nowMs });
      const edit = (nowMs: number) => acquire({ ...group, chatReserve: 1, nowMs });
      expect(await edit(0)).toEqual({ granted: true });
      expect(await edit(500)).toEqual({ granted: false, waitMs: 500, reason: "chat-paced" });
      expect(await edit(1_000)).toEqual({ granted: true });
      // Two in the window: an edit may not take the last place, a send may.
      expect(await edit(2_000)).toEqual({ granted: false, waitMs: 8_000, reason: "chat-reserved" });
      expect(await send(2_000)).toEqual({ granted: true });
      // Full: everyone waits for the oldest start (0) to leave; an edit for two to leave (1_000).
      expect(await send(3_000)).toEqual({ granted: false, waitMs: 7_000, reason: "chat-paced" });
      expect(await edit(3_000)).toEqual({ granted: false, waitMs: 8_000, reason: "chat-reserved" });
      expect(await send(10_000)).toEqual({ granted: true });
      expect(await edit(11_000)).toEqual({
        granted: false,
        waitMs: 1_000,
        reason: "chat-reserved",
      });
      expect(await edit(12_000)).toEqual({ granted: true });
    });

    it("a reserve never takes the whole window: with none in it, a reserved request is granted", async () => {
      await fresh();
      const group = { chatKey: "-1", chatLimit: 2, chatWindowMs: 10_000, chatReserve: 5 };
      expect(await acquire({ ...group, nowMs: 0 })).toEqual({ granted: true });
      expect(await acquire({ ...group, nowMs: 1 })).toEqual({
        granted: false,
        waitMs: 9_999,
        reason: "chat-reserved",
      });
      expect(await acquire({ ...group, nowMs: 10_000 })).toEqual({ granted: true });
    });

    it("reserves the next global slot within maxStartInMs, in time order, recorded at its time", async () => {
      await fresh();
      const at = (nowMs: number, maxStartInMs?: number) =>
        acquire({
          chatKey: undefined,
          globalLimit: 2,
          nowMs,
          ...(maxStartInMs === undefined ? {} : { maxStartInMs }),
        });
      expect(await at(0)).toEqual({ granted: true });
      expect(await at(100)).toEqual({ granted: true });
      // Full until the start at 0 leaves (1_000): reserved, not granted now.
      expect(await at(500, 600)).toEqual({ granted: true, startInMs: 500 });
      expect(await at(600, 600)).toEqual({ granted: true, startInMs: 500 });
      // The next slot (the reservation at 1_000 leaves at 2_000) is further than allowed: the wait
      // ends when it is within reach.
      expect(await at(700, 300)).toEqual({
        granted: false,
        waitMs: 1_000,
        reason: "global-budget",
      });
      // Without maxStartInMs nothing is reserved; and nothing goes before the reservations.
      expect(await at(1_050)).toEqual({ granted: false, waitMs: 950, reason: "global-budget" });
      expect(await at(2_000)).toEqual({ granted: true });
      expect(await at(2_000, 1_000)).toEqual({ granted: true, startInMs: 100 });
    });

    it("a reservation takes the chat's slot from its time; chat spacing and freezes are never reserved", async () => {
      await fresh();
      const chat = (chatKey: string, nowMs: number, maxStartInMs = 0) =>
        acquire({ chatKey, intervalMs: 1_000, globalLimit: 1, nowMs, maxStartInMs });
      expect(await chat("1", 0)).toEqual({ granted: true });
      expect(await chat("2", 400, 800)).toEqual({ granted: true, startInMs: 600 });
      // Chat 2's spacing runs from its reserved start (1_000), not from when it was asked.
      expect(await chat("2", 1_500, 800)).toEqual({
        granted: false,
        waitMs: 500,
        reason: "chat-paced",
      });
      await store.freeze("3", 5_000, 1_500);
      expect(await chat("3", 1_500, 800)).toEqual({
        granted: false,
        waitMs: 5_000,
        reason: "chat-frozen",
      });
      expect(await chat("4", 1_500, 800)).toEqual({ granted: true, startInMs: 500 });
      // A group's window counts the reserved start too.
      const group = { chatKey: "-1", chatLimit: 1, chatWindowMs: 10_000, globalLimit: 1 };
      expect(await acquire({ ...group, nowMs: 2_100, maxStartInMs: 900 })).toEqual({
        granted: true,
        startInMs: 900,
      });
      expect(await acquire({ ...group, nowMs: 3_000 })).toEqual({
        granted: false,
        waitMs: 10_000,
        reason: "chat-paced",
      });
    });

    it("keeps paid broadcasts in a window of their own: neither fills the other's, a global freeze holds both", async () => {
      await fresh();
      const free = (chatKey: string, nowMs: number) => acquire({ chatKey, globalLimit: 2, nowMs });
      const paid = (chatKey: string, nowMs: number) =>
        acquire({ chatKey, globalLimit: 3, paidBroadcast: true, nowMs });
      for (const chat of ["p1", "p2", "p3"]) expect(await paid(chat, 0)).toEqual({ granted: true });
      expect(await paid("p4", 100)).toEqual({
        granted: false,
        waitMs: 900,
        reason: "global-budget",
      });
      // The paid window is full; the global one is untouched by it.
      expect(await free("f1", 100)).toEqual({ granted: true });
      expect(await free("f2", 100)).toEqual({ granted: true });
      expect(await free("f3", 200)).toEqual({
        granted: false,
        waitMs: 900,
        reason: "global-budget",
      });
      expect(await paid("p4", 1_000)).toEqual({ granted: true });
      // A chat's spacing holds its paid and its other requests alike.
      const spaced = { chatKey: "c", intervalMs: 1_000, globalLimit: 10 };
      expect(await acquire({ ...spaced, paidBroadcast: true, nowMs: 2_000 })).toEqual({
        granted: true,
      });
      expect(await acquire({ ...spaced, nowMs: 2_500 })).toEqual({
        granted: false,
        waitMs: 500,
        reason: "chat-paced",
      });
      await store.freeze(undefined, 1_000, 3_000);
      expect(await paid("p5", 3_500)).toEqual({
        granted: false,
        waitMs: 500,
        reason: "global-frozen",
      });
    });

    it("unpaced requests neither wait for nor fill a chat's window", async () => {
      await fresh();
      const group = { chatKey: "-1", chatLimit: 1, chatWindowMs: 10_000 };
      expect(await acquire({ ...group, nowMs: 0 })).toEqual({ granted: true });
      expect(await acquire({ ...group, paced: false, nowMs: 1 })).toEqual({ granted: true });
      expect(await acquire({ ...group, nowMs: 10_000 })).toEqual({ granted: true });
    });
  });
}
