// The safe offset watermark: the highest update_id at or below which every update the
// dispatcher was given has finished, whatever order ids arrive and finish in.

import { describe, expect, it } from "vitest";
import { UpdateLedger } from "../src/dispatcher/update-ledger.js";
import { UpdateDispatcher } from "../src/index.js";
import { privateMessage } from "./fixtures.js";
import { fullPrincipal, recorder, settle } from "./harness.js";

describe("watermark", () => {
  it("is undefined until an update finishes, then follows finished updates", async () => {
    const rec = recorder();
    const dispatcher = new UpdateDispatcher(rec.processor);
    expect(dispatcher.watermark).toBeUndefined();
    const gate = rec.gate(10);
    await dispatcher.enqueue(privateMessage(10, 1));
    await settle();
    expect(dispatcher.watermark).toBeUndefined();
    gate.resolve();
    await dispatcher.drain();
    expect(dispatcher.watermark).toBe(10);
    expect(dispatcher.snapshot().watermark).toBe(10);
  });

  it("stays below an unfinished update while later ones of other principals finish", async () => {
    const rec = recorder();
    const dispatcher = new UpdateDispatcher(rec.processor);
    const slow = rec.gate(11);
    for (const [id, userId] of [
      [10, 1],
      [11, 2],
      [12, 3],
      [13, 1],
    ] as const) {
      await dispatcher.enqueue(privateMessage(id, userId));
    }
    await settle();
    expect(rec.finished).toEqual(expect.arrayContaining([10, 12, 13]));
    expect(dispatcher.watermark).toBe(10);
    slow.resolve();
    await dispatcher.drain();
    expect(dispatcher.watermark).toBe(13);
  });

  it("counts queued updates as unfinished", async () => {
    const rec = recorder();
    const dispatcher = new UpdateDispatcher(rec.processor);
    const gate = rec.gate(1);
    await dispatcher.enqueue(privateMessage(1, 1));
    await dispatcher.enqueue(privateMessage(2, 2));
    await dispatcher.enqueue(privateMessage(3, 1)); // queued behind 1
    await dispatcher.enqueue(privateMessage(4, 2));
    await settle();
    expect(rec.finished).toEqual([2, 4]);
    // Nothing at or below 0 is unfinished: confirming offset 1 keeps update 1 with Telegram.
    expect(dispatcher.watermark).toBe(0);
    gate.resolve();
    await dispatcher.drain();
    expect(dispatcher.watermark).toBe(4);
  });

  it("handles ids that arrive out of order: a late lower id pulls it down until it finishes", async () => {
    const rec = recorder();
    const dispatcher = new UpdateDispatcher(rec.processor);
    await dispatcher.enqueue(privateMessage(20, 1));
    await dispatcher.drain();
    expect(dispatcher.watermark).toBe(20);
    const gate = rec.gate(15);
    await dispatcher.enqueue(privateMessage(15, 2));
    expect(dispatcher.watermark).toBe(14);
    gate.resolve();
    await dispatcher.drain();
    expect(dispatcher.watermark).toBe(20);
  });

  it("failed, thrown and timed-out updates count as finished", async () => {
    const dispatcher = new UpdateDispatcher((update) => {
      if (update.update_id === 1) throw new Error("x");
      if (update.update_id === 2) return Promise.reject(new Error("y"));
      return undefined;
    });
    for (const id of [1, 2, 3]) await dispatcher.enqueue(privateMessage(id, id));
    await dispatcher.drain();
    expect(dispatcher.watermark).toBe(3);
  });

  it("a waiting update holds it; an update rejected at a bound does not", async () => {
    const { dispatcher, gate } = await fullPrincipal();
    expect((await dispatcher.enqueue(privateMessage(3, 42))).status).toBe("rejected");
    const waiting = dispatcher.enqueue(privateMessage(4, 42), { wait: true });
    await dispatcher.enqueue(privateMessage(5, 7));
    await settle();
    expect(dispatcher.watermark).toBe(0);
    gate.resolve();
    await waiting;
    await dispatcher.drain();
    // 3 was rejected: the caller owns it, so it does not block the watermark forever.
    expect(dispatcher.watermark).toBe(5);
  });

  it("an update whose wait was aborted holds it until the same id is enqueued again", async () => {
    const { dispatcher, gate } = await fullPrincipal();
    const controller = new AbortController();
    const withdrawn = dispatcher.enqueue(privateMessage(3, 42), {
      wait: true,
      signal: controller.signal,
    });
    await dispatcher.enqueue(privateMessage(4, 7));
    controller.abort();
    await expect(withdrawn).rejects.toThrow();
    gate.resolve();
    await dispatcher.drain();
    // A poller confirms offset 3, so Telegram delivers 3 again; 4 is then a duplicate.
    expect(dispatcher.watermark).toBe(2);
    expect((await dispatcher.enqueue(privateMessage(3, 42))).status).toBe("accepted");
    expect((await dispatcher.enqueue(privateMessage(4, 7))).status).toBe("duplicate");
    await dispatcher.drain();
    expect(dispatcher.watermark).toBe(4);
  });

  it("ignores updates without a valid update_id", async () => {
    const dispatcher = new UpdateDispatcher(() => {});
    await dispatcher.enqueue({ message: undefined } as never);
    await dispatcher.enqueue({ update_id: 2.5 } as never);
    await dispatcher.drain();
    expect(dispatcher.watermark).toBeUndefined();
    expect(dispatcher.snapshot().succeeded).toBe(2);
  });
});

describe("UpdateLedger", () => {
  it("is the highest settled id below the lowest open or held id", () => {
    const ledger = new UpdateLedger(10, 10);
    for (const id of [1, 2, 3, 4, 5]) ledger.open(id);
    ledger.finish(2);
    ledger.finish(5);
    expect(ledger.watermark).toBe(0);
    ledger.finish(1);
    expect(ledger.watermark).toBe(2);
    ledger.hold(3);
    ledger.finish(4);
    expect(ledger.watermark).toBe(2);
    ledger.release(3);
    expect(ledger.watermark).toBe(5);
  });

  it("forgets the highest held id beyond its limit, so the lowest keeps holding", () => {
    const ledger = new UpdateLedger(0, 2);
    ledger.release(10);
    ledger.hold(3);
    ledger.hold(1);
    ledger.hold(2);
    expect(ledger.watermark).toBe(0);
    ledger.release(1);
    expect(ledger.watermark).toBe(1);
    ledger.release(2);
    // 3 was forgotten: nothing holds the watermark any more.
    expect(ledger.watermark).toBe(10);
  });

  it("keeps its heap bounded while a low id stays open and many later ones finish", () => {
    const ledger = new UpdateLedger(0, 1);
    ledger.open(1);
    for (let id = 2; id < 10_000; id++) {
      ledger.open(id);
      ledger.finish(id);
    }
    expect(ledger.watermark).toBe(0);
    ledger.finish(1);
    expect(ledger.watermark).toBe(9_999);
  });
});
