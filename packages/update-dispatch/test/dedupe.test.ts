// Duplicate update_id suppression: always for open ids, within a bounded window for finished ones.

import { describe, expect, it } from "vitest";
import { UpdateLedger } from "../src/dispatcher/update-ledger.js";
import { UpdateDispatcher } from "../src/index.js";
import { editedPrivateMessage, privateMessage } from "./fixtures.js";
import { fullPrincipal, recorder, settle } from "./harness.js";

describe("duplicate suppression", () => {
  it("drops an update whose id is queued or running", async () => {
    const rec = recorder();
    const dispatcher = new UpdateDispatcher(rec.processor);
    const gate = rec.gate(1);
    await dispatcher.enqueue(privateMessage(1, 42));
    await dispatcher.enqueue(privateMessage(2, 42));
    await settle();
    expect(await dispatcher.enqueue(privateMessage(1, 42))).toEqual({ status: "duplicate" });
    expect(await dispatcher.enqueue(privateMessage(2, 42))).toEqual({ status: "duplicate" });
    gate.resolve();
    await dispatcher.drain();
    expect(rec.started).toEqual([1, 2]);
    expect(dispatcher.snapshot()).toMatchObject({ duplicates: 2, accepted: 2 });
  });

  it("drops a redelivery of a finished update within the window, whatever its content", async () => {
    const rec = recorder();
    const dispatcher = new UpdateDispatcher(rec.processor);
    await dispatcher.enqueue(privateMessage(1, 42));
    await dispatcher.drain();
    expect(await dispatcher.enqueue(editedPrivateMessage(1, 77))).toEqual({ status: "duplicate" });
    expect(rec.started).toEqual([1]);
  });

  it("drops an update whose id is waiting for capacity", async () => {
    const { rec, dispatcher, gate } = await fullPrincipal();
    const waiting = dispatcher.enqueue(privateMessage(3, 42), { wait: true });
    expect(await dispatcher.enqueue(privateMessage(3, 42), { wait: true })).toEqual({
      status: "duplicate",
    });
    gate.resolve();
    expect((await waiting).status).toBe("accepted");
    await dispatcher.drain();
    expect(rec.started).toEqual([1, 2, 3]);
  });

  it("forgets the oldest finished ids beyond dedupeWindow", async () => {
    const rec = recorder();
    const dispatcher = new UpdateDispatcher(rec.processor, { dedupeWindow: 2 });
    for (const id of [1, 2, 3]) await dispatcher.enqueue(privateMessage(id, id));
    await dispatcher.drain();
    expect((await dispatcher.enqueue(privateMessage(3, 3))).status).toBe("duplicate");
    expect((await dispatcher.enqueue(privateMessage(2, 2))).status).toBe("duplicate");
    expect((await dispatcher.enqueue(privateMessage(1, 1))).status).toBe("accepted");
    await dispatcher.drain();
    expect(rec.started).toEqual([1, 2, 3, 1]);
  });

  it("dedupeWindow 0 remembers no finished id, but still drops open ones", async () => {
    const rec = recorder();
    const dispatcher = new UpdateDispatcher(rec.processor, { dedupeWindow: 0 });
    const gate = rec.gate(1);
    await dispatcher.enqueue(privateMessage(1, 42));
    expect((await dispatcher.enqueue(privateMessage(1, 42))).status).toBe("duplicate");
    gate.resolve();
    await dispatcher.drain();
    expect((await dispatcher.enqueue(privateMessage(1, 42))).status).toBe("accepted");
    await dispatcher.drain();
    expect(rec.started).toEqual([1, 1]);
  });

  it("a rejected update is not remembered: offering it again later can succeed", async () => {
    const rec = recorder();
    const dispatcher = new UpdateDispatcher(rec.processor, { maxActivePrincipals: 1 });
    const gate = rec.gate(1);
    await dispatcher.enqueue(privateMessage(1, 42));
    expect((await dispatcher.enqueue(privateMessage(2, 77))).status).toBe("rejected");
    gate.resolve();
    await dispatcher.drain();
    expect((await dispatcher.enqueue(privateMessage(2, 77))).status).toBe("accepted");
    await dispatcher.drain();
    expect(rec.started).toEqual([1, 2]);
  });

  it("updates without a valid update_id are never treated as duplicates", async () => {
    const rec = recorder();
    const dispatcher = new UpdateDispatcher(() => {});
    const malformed = { message: undefined } as never;
    expect((await dispatcher.enqueue(malformed)).status).toBe("accepted");
    expect((await dispatcher.enqueue(malformed)).status).toBe("accepted");
    await dispatcher.drain();
    expect(rec.started).toEqual([]);
    expect(dispatcher.snapshot().succeeded).toBe(2);
  });
});

describe("the dedupe window (ledger)", () => {
  it("remembers the last `windowSize` consecutive ids, one slot per id modulo the window", () => {
    const ledger = new UpdateLedger(3, 10);
    for (const id of [1, 2, 3]) {
      ledger.open(id);
      ledger.finish(id);
    }
    expect([1, 2, 3].map((id) => ledger.isDuplicate(id))).toEqual([true, true, true]);
    ledger.open(4);
    ledger.finish(4); // 4 takes 1's slot
    expect([1, 2, 3, 4].map((id) => ledger.isDuplicate(id))).toEqual([false, true, true, true]);
    ledger.open(1);
    ledger.finish(1); // an old id finished again takes its slot back, from 4
    expect([1, 2, 3, 4].map((id) => ledger.isDuplicate(id))).toEqual([true, true, true, false]);
  });

  it("forgets exactly the ids that left a large window", () => {
    const ledger = new UpdateLedger(4096, 10);
    for (let id = 1; id <= 200_000; id++) {
      ledger.open(id);
      ledger.finish(id);
    }
    expect(ledger.isDuplicate(200_000 - 4095)).toBe(true);
    expect(ledger.isDuplicate(200_000 - 4096)).toBe(false);
  });

  it("takes negative and huge ids (any safe integer) into slots too", () => {
    const ledger = new UpdateLedger(5, 10);
    for (const id of [-7, Number.MAX_SAFE_INTEGER, 0]) {
      expect(ledger.isDuplicate(id)).toBe(false);
      ledger.open(id);
      ledger.finish(id);
      expect(ledger.isDuplicate(id)).toBe(true);
    }
  });

  it("keeps open ids duplicates however far the finished ids run ahead", () => {
    const ledger = new UpdateLedger(4, 10);
    ledger.open(1);
    for (let id = 2; id <= 100; id++) {
      ledger.open(id);
      ledger.finish(id);
    }
    expect(ledger.isDuplicate(1)).toBe(true);
    ledger.finish(1);
    expect(ledger.watermark).toBe(100);
  });
});
