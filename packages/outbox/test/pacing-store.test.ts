import { type Clock, ManualClock, type SleepOptions, type Timer } from "@telepace/core";
import { spyLogger } from "@telepace/testing";
import { describe, expect, it } from "vitest";
import {
  type FreezeListener,
  MemoryPacingStore,
  type PacingDecision,
  type PacingRequest,
  type PacingStore,
  RetryAfterError,
  type RetryAfterTooLongError,
} from "../src/index.js";
import { describePacingStoreContract, request } from "./support/pacing-store-contract.js";
import { setup } from "./support/setup.js";

describePacingStoreContract(
  "MemoryPacingStore: the PacingStore contract",
  () => new MemoryPacingStore(),
);

describe("MemoryPacingStore", () => {
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

  it("a grant that lands after a 429 froze everything is not used: nothing starts in the freeze", async () => {
    // Decides when asked (as Redis does) but lets the answer travel until `release()`.
    const store = new (class extends AsyncStore {
      override acquire(req: PacingRequest): Promise<PacingDecision> {
        const decision = this.inner.acquire(req);
        if (!this.hold) return Promise.resolve(decision);
        return new Promise((resolve) => this.held.push(() => resolve(decision)));
      }
    })();
    const { clock, outbox, rec } = setup({ pacingStore: store });
    let attempts = 0;
    const x = outbox.enqueue({
      chatId: undefined,
      key: "x",
      execute: async () => {
        if (attempts++ > 0) return "x";
        await clock.sleep(100);
        throw new RetryAfterError(2_000);
      },
    });
    await clock.advance(50);
    // b's question is on its way when x's 429 comes back; the store, not frozen yet, grants it.
    store.hold = true;
    outbox.enqueue({ chatId: 2, execute: rec.scripted("b") });
    await clock.flush();
    expect(store.held).toHaveLength(1);
    await clock.advance(50);
    store.release();
    await clock.advance(1_999);
    expect(rec.calls).toEqual([]);
    await clock.advance(5_000);
    // Once, after the 2 s freeze from x's 429 at 100 ms.
    expect(rec.labels).toEqual(["b"]);
    expect(rec.last("b").startedAt).toBeGreaterThanOrEqual(2_100);
    expect((await x).status).toBe("delivered");
  });

  it("a failing store holds everything and asks again later, backing off; nothing is sent unpaced", async () => {
    const store = new AsyncStore();
    store.failNext = 3;
    const logger = spyLogger();
    const { clock, outbox, rec } = setup({
      pacingStore: store,
      retryBaseDelayMs: 500,
      retryMaxDelayMs: 1_500,
      logger,
    });
    const op = outbox.enqueue({ chatId: 1, execute: rec.scripted("x") });
    await clock.flush();
    expect(outbox.snapshot()).toMatchObject({
      pacingStoreRetryInMs: 500,
      counters: { pacingStoreFailures: 1 },
    });
    // Asked again at 500 (fails: next in 1 s), at 1_500 (fails: next in 1.5 s, the cap), at 3_000.
    await clock.advance(2_999);
    expect(rec.calls).toHaveLength(0);
    expect(outbox.snapshot()).toMatchObject({
      pacingStoreRetryInMs: 1,
      counters: { pacingStoreFailures: 3 },
    });
    await clock.advance(1);
    expect((await op).status).toBe("delivered");
    expect(rec.calls.map((c) => c.startedAt)).toEqual([3_000]);
    expect(outbox.snapshot().pacingStoreRetryInMs).toBe(0);
    const errors = logger.calls.filter((call) => call.level === "error");
    expect(errors.map((call) => [call.message, call.fields])).toEqual(
      [1, 2, 3].map((n) => [
        "outbox pacing store failed",
        { error: "Error", consecutiveFailures: n, retryInMs: Math.min(500 * 2 ** (n - 1), 1_500) },
      ]),
    );
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

/** The memory store reserving ahead, recording how far ahead each question allowed. */
class ReservingStore implements PacingStore {
  readonly inner: MemoryPacingStore;
  readonly reserveAheadMs: number;
  readonly asked: (number | undefined)[] = [];
  constructor(reserveAheadMs: number) {
    this.inner = new MemoryPacingStore({ reserveAheadMs });
    this.reserveAheadMs = reserveAheadMs;
  }
  acquire(req: PacingRequest): Promise<PacingDecision> {
    this.asked.push(req.maxStartInMs);
    return Promise.resolve().then(() => this.inner.acquire(req));
  }
  freeze(chatKey: string | undefined, durationMs: number, nowMs: number): Promise<void> {
    return Promise.resolve().then(() => this.inner.freeze(chatKey, durationMs, nowMs));
  }
  /**
   * Another process takes `count` global slots at `nowMs` (of a budget of `globalLimit`): this
   * outbox's own gate knows nothing of them, only the store's window holds them.
   */
  otherProcessStarts(nowMs: number, globalLimit: number, count = 1): void {
    for (let i = 0; i < count; i++) {
      const decision = this.inner.acquire(
        request({ chatKey: `other-${i}`, globalLimit, globalWindowMs: 1_000, nowMs }),
      );
      expect(decision).toEqual({ granted: true });
    }
  }
}

describe("a store that reserves slots ahead", () => {
  it("starts a reserved op at its slot's time, not before; ops that waited longer may reserve further ahead", async () => {
    const store = new ReservingStore(800);
    const { clock, outbox, rec } = setup({ pacingStore: store, globalRps: 2 });
    // Another process's two slots fill the second: only the store knows of them.
    store.otherProcessStarts(clock.now(), 2, 2);
    for (const chat of [3, 4]) outbox.enqueue({ chatId: chat, execute: rec.scripted(`${chat}`) });
    await clock.advance(999);
    expect(rec.labels).toEqual([]);
    await clock.advance(1);
    expect(rec.calls.map((c) => [c.label, c.startedAt])).toEqual([
      ["3", 1_000],
      ["4", 1_000],
    ]);
    // A quarter of 800 for fresh ops; 3 was told to come back at 800, when it (and 4) had waited
    // 800 ms and could reserve the slots at 1_000.
    expect(store.asked).toEqual([200, 800, 800]);
  });

  it("a slot reserved for an op aborted meanwhile is used by its lane's next op or wasted, never granted twice", async () => {
    const store = new ReservingStore(800);
    const { clock, outbox, rec } = setup({ pacingStore: store, globalRps: 1 });
    store.otherProcessStarts(clock.now(), 1);
    const controller = new AbortController();
    const b = outbox.enqueue(
      { chatId: 2, execute: rec.scripted("b") },
      { signal: controller.signal },
    );
    // b reserves the slot at 1_000 when asked at 800.
    await clock.advance(900);
    controller.abort("gone");
    await expect(b).rejects.toBe("gone");
    outbox.enqueue({ chatId: 3, execute: rec.scripted("c") });
    await clock.advance(50);
    outbox.enqueue({ chatId: 2, execute: rec.scripted("d") });
    await clock.advance(5_000);
    // d, next in b's lane, takes b's slot; c waits for the slot after it.
    expect(rec.calls.map((c) => [c.label, c.startedAt])).toEqual([
      ["d", 1_000],
      ["c", 2_000],
    ]);
    // An empty lane's reservation is wasted: f gets the slot after e's.
    const t0 = clock.now();
    store.otherProcessStarts(t0, 1);
    const controller2 = new AbortController();
    const e = outbox.enqueue(
      { chatId: 4, execute: rec.scripted("e") },
      { signal: controller2.signal },
    );
    outbox.enqueue({ chatId: 5, execute: rec.scripted("f") });
    // e reserves the other process's start + 1 s when asked at + 800 ms, then is aborted.
    await clock.advance(900);
    controller2.abort("gone");
    await expect(e).rejects.toBe("gone");
    await clock.advance(5_000);
    expect(rec.calls.slice(2).map((c) => [c.label, c.startedAt - t0])).toEqual([["f", 2_000]]);
  });

  it("a freeze that comes while a slot is reserved holds it: the reservation is not used", async () => {
    const store = new ReservingStore(800);
    const { clock, outbox, rec } = setup({ pacingStore: store, globalRps: 1 });
    // A chat-less request answers 429 at 900 ms: everything is frozen for 3 s.
    let attempts = 0;
    outbox.enqueue({
      chatId: undefined,
      key: "x",
      execute: async () => {
        if (attempts++ > 0) return "x";
        await clock.sleep(900);
        throw new RetryAfterError(3_000);
      },
    });
    // b reserves the slot at 1_000 when asked at 800; at 1_000 everything is frozen.
    outbox.enqueue({ chatId: 2, execute: rec.scripted("b") });
    await clock.advance(3_899);
    expect(rec.calls).toEqual([]);
    await clock.advance(5_000);
    // After the freeze x (queued first) retries at 3_900, and b takes the slot after it.
    expect(attempts).toBe(2);
    expect(rec.calls.map((c) => [c.label, c.startedAt])).toEqual([["b", 4_900]]);
  });
});

/**
 * A reserving store shared with another process: `otherProcessFreezes` records a freeze in the
 * shared state, as that process's outbox would on a 429, and tells every subscriber.
 */
class SharedReservingStore extends ReservingStore {
  readonly listeners = new Set<FreezeListener>();
  onFreeze(listener: FreezeListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
  otherProcessFreezes(chatKey: string | undefined, durationMs: number, nowMs: number): void {
    this.inner.freeze(chatKey, durationMs, nowMs);
    for (const listener of this.listeners) listener(chatKey, durationMs);
  }
}

describe("a shared store that reports other processes' freezes", () => {
  it("a global freeze heard while a slot is reserved holds it: the slot goes unused", async () => {
    const store = new SharedReservingStore(800);
    const { clock, outbox, rec } = setup({ pacingStore: store, globalRps: 1 });
    outbox.enqueue({ chatId: 1, execute: rec.scripted("a") });
    // b reserves the slot at 1_000 when asked at 800; at 900 another process is told to wait 3 s.
    outbox.enqueue({ chatId: 2, execute: rec.scripted("b") });
    await clock.advance(900);
    store.otherProcessFreezes(undefined, 3_000, clock.now());
    expect(outbox.snapshot().globalFrozenForMs).toBe(3_000);
    await clock.advance(2_999);
    expect(rec.labels).toEqual(["a"]);
    await clock.advance(1_000);
    // The unused slot at 1_000 still counts (the store counted it); b asks again once the freeze
    // is over and gets the next one.
    expect(rec.calls.map((c) => [c.label, c.startedAt])).toEqual([
      ["a", 0],
      ["b", 3_900],
    ]);
  });

  it("a chat's freeze heard holds that chat only; one of a chat with no work here is a no-op", async () => {
    const store = new SharedReservingStore(800);
    const { clock, outbox, rec } = setup({ pacingStore: store, globalRps: 1 });
    store.otherProcessStarts(clock.now(), 1);
    outbox.enqueue({ chatId: 2, execute: rec.scripted("b") });
    await clock.advance(900);
    store.otherProcessFreezes("2", 3_000, clock.now());
    store.otherProcessFreezes("7", 3_000, clock.now());
    outbox.enqueue({ chatId: 3, execute: rec.scripted("c") });
    await clock.advance(5_000);
    // b's reserved slot (1_000) goes unused; c takes the next one; b goes when its chat thaws.
    expect(rec.calls.map((c) => [c.label, c.startedAt])).toEqual([
      ["c", 2_000],
      ["b", 3_900],
    ]);
  });

  it("a freeze heard longer than maxRetryAfterMs fails the chat's waiting ops at once", async () => {
    const store = new SharedReservingStore(800);
    const { clock, outbox, rec } = setup({
      pacingStore: store,
      globalRps: 1,
      maxRetryAfterMs: 60_000,
    });
    outbox.enqueue({ chatId: 1, execute: rec.scripted("a") });
    const b = outbox.enqueue({ chatId: 2, execute: rec.scripted("b") });
    await clock.advance(900);
    store.otherProcessFreezes("2", 3_600_000, clock.now());
    const outcome = await b;
    expect(outcome).toMatchObject({ status: "failed", attempts: 0, maybeDelivered: false });
    expect((outcome as { error: RetryAfterTooLongError }).error).toMatchObject({
      code: "ERR_RETRY_AFTER_TOO_LONG",
      retryAfterMs: 3_600_000,
      maxRetryAfterMs: 60_000,
    });
    await clock.advance(2_000);
    expect(rec.labels).toEqual(["a"]);
  });

  it("subscribes when created, unsubscribes once closed, and logs and ignores a malformed report", async () => {
    const store = new SharedReservingStore(800);
    const logger = spyLogger();
    const { clock, outbox, rec } = setup({ pacingStore: store, globalRps: 1, logger });
    expect(store.listeners.size).toBe(1);
    const [listener] = store.listeners as Set<(chatKey: unknown, durationMs: unknown) => void>;
    listener?.("1", Number.NaN);
    listener?.(42, 1_000);
    listener?.(undefined, Number.POSITIVE_INFINITY);
    // A freeze of 0 ms (retry_after 0) is well formed and holds nothing.
    listener?.(undefined, 0);
    expect(outbox.snapshot().globalFrozenForMs).toBe(0);
    const warnings = logger.calls.filter((call) => call.level === "warn");
    expect(warnings.map((call) => call.message)).toEqual(
      Array(3).fill("outbox ignored a malformed freeze its pacing store reported"),
    );
    outbox.enqueue({ chatId: 1, execute: rec.scripted("a") });
    await clock.advance(0);
    expect(rec.labels).toEqual(["a"]);
    const closed = outbox.close();
    await clock.advance(0);
    await closed;
    expect(store.listeners.size).toBe(0);
  });

  it("refuses a store whose onFreeze is not a function", () => {
    const store = Object.assign(new MemoryPacingStore(), { onFreeze: 42 });
    expect(() => setup({ pacingStore: store as unknown as PacingStore })).toThrow(
      "Expected `pacingStore.onFreeze` to be a function or absent, got 42",
    );
  });
});
