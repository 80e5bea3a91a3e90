import { type Clock, ManualClock, type SleepOptions, type Timer } from "@telepace/core";
import { spyLogger } from "@telepace/testing";
import { describe, expect, it } from "vitest";
import {
  MemoryPacingStore,
  type PacingDecision,
  type PacingRequest,
  type PacingStore,
} from "../src/index.js";
import { setup } from "./support/setup.js";

const request = (overrides: Partial<PacingRequest>): PacingRequest => ({
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

describe("MemoryPacingStore", () => {
  it("grants at most globalLimit starts in any window and says when the next fits", () => {
    const store = new MemoryPacingStore();
    const at = (nowMs: number) =>
      store.acquire(request({ chatKey: undefined, globalLimit: 3, nowMs }));
    expect([at(0), at(100), at(200)].every((d) => d.granted)).toBe(true);
    expect(at(500)).toEqual({ granted: false, waitMs: 500, reason: "global-budget" });
    expect(at(999)).toEqual({ granted: false, waitMs: 1, reason: "global-budget" });
    expect(at(1_000)).toEqual({ granted: true });
    expect(at(1_050)).toEqual({ granted: false, waitMs: 50, reason: "global-budget" });
  });

  it("keeps starts for the longest global window asked about, and counts those in each request's", () => {
    const store = new MemoryPacingStore();
    const at = (nowMs: number, globalWindowMs: number) =>
      store.acquire(request({ chatKey: undefined, globalLimit: 2, globalWindowMs, nowMs }));
    expect([at(0, 1_100), at(0, 1_100)].every((d) => d.granted)).toBe(true);
    expect(at(1_050, 1_100)).toEqual({ granted: false, waitMs: 50, reason: "global-budget" });
    // A shorter window (a smaller margin) does not see the starts at 0…
    expect(at(1_050, 1_000)).toEqual({ granted: true });
    // …but they were kept: the longer window, asked again, still does.
    expect(at(1_060, 1_100)).toEqual({ granted: false, waitMs: 40, reason: "global-budget" });
  });

  it("paces a chat from each start; unpaced requests neither wait for nor take the slot", () => {
    const store = new MemoryPacingStore();
    expect(store.acquire(request({ intervalMs: 1_000, nowMs: 0 }))).toEqual({ granted: true });
    expect(store.acquire(request({ intervalMs: 1_000, nowMs: 400 }))).toEqual({
      granted: false,
      waitMs: 600,
      reason: "chat-paced",
    });
    expect(store.acquire(request({ intervalMs: 1_000, paced: false, nowMs: 400 }))).toEqual({
      granted: true,
    });
    expect(store.acquire(request({ intervalMs: 1_000, nowMs: 1_000 }))).toEqual({ granted: true });
    expect(store.acquire(request({ chatKey: "2", intervalMs: 1_000, nowMs: 1_000 }))).toEqual({
      granted: true,
    });
  });

  it("freezes a chat or everything; a shorter freeze never shortens a longer one", () => {
    const store = new MemoryPacingStore();
    store.freeze("1", 5_000, 0);
    store.freeze("1", 1_000, 0);
    expect(store.acquire(request({ paced: false, nowMs: 4_000 }))).toEqual({
      granted: false,
      waitMs: 1_000,
      reason: "chat-frozen",
    });
    expect(store.acquire(request({ chatKey: "2", nowMs: 4_000 }))).toEqual({ granted: true });
    store.freeze(undefined, 2_000, 4_000);
    expect(store.acquire(request({ chatKey: "2", nowMs: 5_000 }))).toEqual({
      granted: false,
      waitMs: 1_000,
      reason: "global-frozen",
    });
    expect(store.acquire(request({ chatKey: undefined, nowMs: 6_000 }))).toEqual({ granted: true });
  });

  it("denies without recording: a refused request takes no slot anywhere", () => {
    const store = new MemoryPacingStore();
    store.freeze("1", 1_000, 0);
    const global = { globalLimit: 1 };
    expect(store.acquire(request({ ...global, nowMs: 0 })).granted).toBe(false);
    expect(store.acquire(request({ ...global, chatKey: "2", nowMs: 0 })).granted).toBe(true);
  });

  it("holds a chat to its sliding window; a request with a reserve leaves the rest for others", () => {
    const store = new MemoryPacingStore();
    const group = { chatKey: "-1", intervalMs: 1_000, chatLimit: 3, chatWindowMs: 10_000 };
    const send = (nowMs: number) => store.acquire(request({ ...group, nowMs }));
    const edit = (nowMs: number) => store.acquire(request({ ...group, chatReserve: 1, nowMs }));
    expect(edit(0)).toEqual({ granted: true });
    expect(edit(500)).toEqual({ granted: false, waitMs: 500, reason: "chat-paced" });
    expect(edit(1_000)).toEqual({ granted: true });
    // Two in the window: an edit may not take the last place, a send may.
    expect(edit(2_000)).toEqual({ granted: false, waitMs: 8_000, reason: "chat-reserved" });
    expect(send(2_000)).toEqual({ granted: true });
    // Full: everyone waits for the oldest start (0) to leave; an edit for two to leave (1_000).
    expect(send(3_000)).toEqual({ granted: false, waitMs: 7_000, reason: "chat-paced" });
    expect(edit(3_000)).toEqual({ granted: false, waitMs: 8_000, reason: "chat-reserved" });
    expect(send(10_000)).toEqual({ granted: true });
    expect(edit(11_000)).toEqual({ granted: false, waitMs: 1_000, reason: "chat-reserved" });
    expect(edit(12_000)).toEqual({ granted: true });
  });

  it("a reserve never takes the whole window: with none in it, a reserved request is granted", () => {
    const store = new MemoryPacingStore();
    const group = { chatKey: "-1", chatLimit: 2, chatWindowMs: 10_000, chatReserve: 5 };
    expect(store.acquire(request({ ...group, nowMs: 0 }))).toEqual({ granted: true });
    expect(store.acquire(request({ ...group, nowMs: 1 }))).toEqual({
      granted: false,
      waitMs: 9_999,
      reason: "chat-reserved",
    });
    expect(store.acquire(request({ ...group, nowMs: 10_000 }))).toEqual({ granted: true });
  });

  it("unpaced requests neither wait for nor fill a chat's window", () => {
    const store = new MemoryPacingStore();
    const group = { chatKey: "-1", chatLimit: 1, chatWindowMs: 10_000 };
    expect(store.acquire(request({ ...group, nowMs: 0 }))).toEqual({ granted: true });
    expect(store.acquire(request({ ...group, paced: false, nowMs: 1 }))).toEqual({ granted: true });
    expect(store.acquire(request({ ...group, nowMs: 10_000 }))).toEqual({ granted: true });
  });

  it("forgets chats whose slot and freeze have passed, so memory follows active chats", () => {
    const store = new MemoryPacingStore();
    for (let chat = 0; chat < 5_000; chat++) {
      store.acquire(request({ chatKey: String(chat), intervalMs: 1_000, nowMs: chat }));
    }
    expect(store.trackedChats).toBeLessThan(2_100);
  });

  it("remembers a group while its window holds a start, and forgets it after", () => {
    const store = new MemoryPacingStore();
    const group = { chatKey: "-1", intervalMs: 1_000, chatLimit: 1, chatWindowMs: 60_000 };
    expect(store.acquire(request({ ...group, nowMs: 0 }))).toEqual({ granted: true });
    // Enough other chats to run a sweep while the group's slot has passed but its window has not.
    for (let chat = 0; chat < 1_100; chat++) {
      store.acquire(request({ chatKey: String(chat), intervalMs: 1, nowMs: 30_000 }));
    }
    expect(store.acquire(request({ ...group, nowMs: 30_000 }))).toEqual({
      granted: false,
      waitMs: 30_000,
      reason: "chat-paced",
    });
    for (let chat = 0; chat < 1_100; chat++) {
      store.acquire(request({ chatKey: `b${chat}`, intervalMs: 1, nowMs: 60_000 }));
    }
    expect(store.trackedChats).toBeLessThan(1_200);
    expect(store.acquire(request({ ...group, nowMs: 60_000 }))).toEqual({ granted: true });
  });

  it("keeps memory bounded over many groups with long windows", () => {
    const store = new MemoryPacingStore();
    for (let chat = 0; chat < 5_000; chat++) {
      store.acquire(
        request({ chatKey: `-${chat}`, chatLimit: 20, chatWindowMs: 60_000, nowMs: chat * 100 }),
      );
    }
    // About 600 groups have a start in the last minute; the rest are swept.
    expect(store.trackedChats).toBeLessThan(1_300);
  });
});

/** The memory store behind promises, as a shared (Redis-like) store would answer. */
class AsyncStore implements PacingStore {
  readonly inner = new MemoryPacingStore();
  failNext = 0;
  /** While true, answers wait until `release()`. */
  hold = false;
  readonly held: (() => void)[] = [];
  acquire(req: PacingRequest): Promise<PacingDecision> {
    if (this.failNext > 0) {
      this.failNext--;
      return Promise.reject(new Error("store down"));
    }
    if (this.hold)
      return new Promise((resolve) => this.held.push(() => resolve(this.inner.acquire(req))));
    return Promise.resolve().then(() => this.inner.acquire(req));
  }
  release(): void {
    this.hold = false;
    for (const answer of this.held.splice(0)) answer();
  }
  freeze(chatKey: string | undefined, durationMs: number, nowMs: number): Promise<void> {
    return Promise.resolve().then(() => this.inner.freeze(chatKey, durationMs, nowMs));
  }
}

describe("an asynchronous pacing store", () => {
  it("paces and orders exactly like the in-memory one", async () => {
    const run = async (pacingStore?: PacingStore) => {
      const { clock, outbox, rec } = setup({
        pacingStore,
        privateChatRps: 1,
        groupChatRps: 0.5,
        groupBurst: 1,
        globalRps: 2,
      });
      for (const chat of [1, -2, 3]) {
        outbox.enqueue({ chatId: chat, execute: rec.scripted(`${chat}a`) });
        outbox.enqueue({ chatId: chat, priority: 1, execute: rec.scripted(`${chat}b`) });
        outbox.enqueue({ chatId: chat, execute: rec.scripted(`${chat}c`) });
      }
      await clock.advance(10_000);
      return rec.calls.map((c) => [c.label, c.startedAt]);
    };
    const expected = await run();
    expect(expected).toEqual([
      ["1a", 0],
      ["-2a", 0],
      ["1c", 1_000],
      ["3a", 1_000],
      ["-2c", 2_000],
      ["3c", 2_000],
      ["1b", 3_000],
      ["3b", 3_000],
      ["-2b", 4_000],
    ]);
    expect(await run(new AsyncStore())).toEqual(expected);
  });

  it("does not start a paced op on a slot asked for an unpaced one that it overtook meanwhile", async () => {
    const store = new AsyncStore();
    const { clock, outbox, rec } = setup({ pacingStore: store, privateChatRps: 1 });
    outbox.enqueue({ chatId: 1, execute: rec.scripted("send") });
    await clock.advance(500);
    store.hold = true;
    outbox.enqueue({
      chatId: 1,
      priority: 1,
      paced: false,
      key: "typing",
      execute: rec.scripted("typing"),
    });
    await clock.flush();
    expect(store.held).toHaveLength(1);
    // While the store answers the chat action's (unpaced) question, a paced send overtakes it.
    outbox.enqueue({ chatId: 1, execute: rec.scripted("send2") });
    store.release();
    await clock.advance(2_000);
    expect(rec.calls.map((c) => [c.label, c.startedAt])).toEqual([
      ["send", 0],
      ["send2", 1_000],
      ["typing", 1_000],
    ]);
  });

  it("does not start an edit on a slot asked for a send that was aborted meanwhile (the reserve holds)", async () => {
    const store = new AsyncStore();
    const { clock, outbox, rec } = setup({
      pacingStore: store,
      privateChatRps: 1,
      groupChatRps: 1 / 3,
      groupBurst: 2,
      sendReserve: 1,
    });
    // Window: 2 per 6 s; an edit may take a place only while the window is empty.
    outbox.enqueue({ chatId: -1, execute: rec.scripted("send") });
    await clock.advance(500);
    const controller = new AbortController();
    const send2 = outbox.enqueue(
      { chatId: -1, execute: rec.scripted("send2") },
      { signal: controller.signal },
    );
    outbox.enqueue({ chatId: -1, key: "e", priority: 2, execute: rec.scripted("edit") });
    await clock.flush();
    // The send's slot is asked for at 1 s, and granted only after the send was aborted.
    store.hold = true;
    await clock.advance(500);
    expect(store.held).toHaveLength(1);
    controller.abort("gone");
    await expect(send2).rejects.toBe("gone");
    store.release();
    await clock.advance(10_000);
    // The grant (recorded at 1 s) was for a send; the edit asked for its own and waited for an
    // empty window.
    expect(rec.calls.map((c) => [c.label, c.startedAt])).toEqual([
      ["send", 0],
      ["edit", 7_000],
    ]);
  });

  it("a failing store holds everything and asks again later; nothing is sent unpaced", async () => {
    const store = new AsyncStore();
    store.failNext = 2;
    const logger = spyLogger();
    const { clock, outbox, rec } = setup({ pacingStore: store, retryBaseDelayMs: 500, logger });
    const op = outbox.enqueue({ chatId: 1, execute: rec.scripted("x") });
    await clock.advance(499);
    expect(rec.calls).toHaveLength(0);
    await clock.advance(501);
    expect((await op).status).toBe("delivered");
    const errors = logger.calls.filter((call) => call.level === "error");
    expect(errors.map((call) => call.message)).toEqual([
      "outbox pacing store failed",
      "outbox pacing store failed",
    ]);
  });
});

/** A clock that moves while it is read, as real time does on a busy machine: each read is 1 ms on. */
class BusyClock implements Clock {
  readonly manual = new ManualClock();
  #drift = 0;

  now(): number {
    return this.manual.now() + ++this.#drift;
  }

  setTimer(callback: () => void, delayMs: number): Timer {
    return this.manual.setTimer(callback, delayMs);
  }

  sleep(delayMs: number, options?: SleepOptions): Promise<void> {
    return this.manual.sleep(delayMs, options);
  }
}

describe("the outbox asking its store", () => {
  it("asks at the time of asking: a wait already over when the answer lands does not spin", async () => {
    // The store's wait ends half a millisecond after the time it was asked at. By the time the
    // outbox has read its clock again, that moment has passed: asking again with the old time
    // would get the same answer forever (a synchronous spin that starved a loaded machine).
    let readyAt: number | undefined;
    const asked: number[] = [];
    const store: PacingStore = {
      acquire(request): PacingDecision {
        asked.push(request.nowMs);
        readyAt ??= request.nowMs + 0.5;
        // Past a handful of questions the spin is proven: grant, so the test fails, not hangs.
        if (request.nowMs >= readyAt || asked.length > 50) return { granted: true };
        return { granted: false, waitMs: readyAt - request.nowMs, reason: "chat-paced" };
      },
      freeze() {},
    };
    const clock = new BusyClock();
    const { outbox } = setup({ clock, pacingStore: store });
    const outcome = await outbox.enqueue({ chatId: 1, execute: async () => "sent" });
    expect(outcome.status).toBe("delivered");
    expect(asked).toHaveLength(2);
    expect(asked[1]).toBeGreaterThan(asked[0] as number);
  });
});
