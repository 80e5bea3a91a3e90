// The three bounds: waiting updates per principal, active principals, running processors.

import { describe, expect, it } from "vitest";
import { UpdateDispatcher } from "../src/index.js";
import { groupMessage, privateMessage } from "./fixtures.js";
import { fullPrincipal, recorder, settle } from "./harness.js";

describe("per-principal queue bound", () => {
  it("accepts 1 running + 32 waiting for a busy key and rejects the 33rd waiting update", async () => {
    const rec = recorder();
    const dispatcher = new UpdateDispatcher(rec.processor);
    const gate = rec.gate(1);
    expect((await dispatcher.enqueue(privateMessage(1, 42))).status).toBe("accepted");
    await settle();
    expect(rec.running).toBe(1);
    for (let id = 2; id <= 33; id++) {
      expect(await dispatcher.enqueue(privateMessage(id, 42))).toEqual({
        status: "accepted",
        keyKind: "private",
      });
    }
    expect(await dispatcher.enqueue(privateMessage(34, 42))).toEqual({
      status: "rejected",
      reason: "principal-queue-full",
    });
    // Another principal is unaffected.
    expect((await dispatcher.enqueue(privateMessage(35, 77))).status).toBe("accepted");
    expect(dispatcher.snapshot().rejected["principal-queue-full"]).toBe(1);

    gate.resolve();
    await dispatcher.drain();
    expect(rec.finished.filter((id) => id !== 35)).toEqual(
      Array.from({ length: 33 }, (_, index) => index + 1),
    );
  });

  it("the bound counts waiting updates only: room frees as the key's worker takes the next one", async () => {
    const rec = recorder();
    const dispatcher = new UpdateDispatcher(rec.processor, { maxQueuedPerPrincipal: 2 });
    const first = rec.gate(1);
    const second = rec.gate(2);
    for (const id of [1, 2, 3]) await dispatcher.enqueue(privateMessage(id, 42));
    expect((await dispatcher.enqueue(privateMessage(4, 42))).status).toBe("rejected");
    first.resolve();
    await settle();
    // 2 is running now; 3 waits; one slot is free again.
    expect(rec.started).toEqual([1, 2]);
    expect((await dispatcher.enqueue(privateMessage(5, 42))).status).toBe("accepted");
    expect((await dispatcher.enqueue(privateMessage(6, 42))).status).toBe("rejected");
    second.resolve();
    await dispatcher.drain();
    expect(rec.finished).toEqual([1, 2, 3, 5]);
  });

  it("a rejected update is never processed", async () => {
    const { rec, dispatcher, gate } = await fullPrincipal();
    expect((await dispatcher.enqueue(privateMessage(3, 42))).status).toBe("rejected");
    gate.resolve();
    await dispatcher.drain();
    expect(rec.started).toEqual([1, 2]);
  });
});

describe("active-principal bound", () => {
  it("rejects a 257th principal while an existing principal still accepts", async () => {
    const rec = recorder();
    const dispatcher = new UpdateDispatcher(rec.processor);
    const gates = [];
    for (let userId = 1; userId <= 256; userId++) {
      gates.push(rec.gate(userId));
      expect((await dispatcher.enqueue(privateMessage(userId, userId))).status).toBe("accepted");
    }
    expect(dispatcher.snapshot().activePrincipals).toBe(256);
    expect(await dispatcher.enqueue(privateMessage(1000, 257))).toEqual({
      status: "rejected",
      reason: "active-principals-full",
    });
    expect((await dispatcher.enqueue(privateMessage(1001, 5))).status).toBe("accepted");
    expect(dispatcher.snapshot().rejected["active-principals-full"]).toBe(1);

    // Once one principal drains, a new one gets its slot.
    gates[9]?.resolve();
    await settle();
    expect(dispatcher.snapshot().activePrincipals).toBe(255);
    expect((await dispatcher.enqueue(privateMessage(1002, 257))).status).toBe("accepted");
    for (const gate of gates) gate.resolve();
    await dispatcher.drain();
    expect(rec.started).not.toContain(1000);
    expect(rec.started).toContain(1002);
  });

  it("a principal whose queue is empty but whose last update still runs stays active", async () => {
    const rec = recorder();
    const dispatcher = new UpdateDispatcher(rec.processor, { maxActivePrincipals: 1 });
    const gate = rec.gate(1);
    await dispatcher.enqueue(privateMessage(1, 42));
    await settle();
    expect(dispatcher.snapshot()).toMatchObject({ queued: 0, inFlight: 1, activePrincipals: 1 });
    expect((await dispatcher.enqueue(privateMessage(2, 77))).status).toBe("rejected");
    // The same principal appends to its queue: no second worker.
    expect((await dispatcher.enqueue(privateMessage(3, 42))).status).toBe("accepted");
    gate.resolve();
    await dispatcher.drain();
    expect(rec.finished).toEqual([1, 3]);
    expect(rec.maxRunning).toBe(1);
  });
});

describe("global processor limit", () => {
  it("never runs more than 16 processors at once, and reaches 16 under load", async () => {
    const rec = recorder();
    const dispatcher = new UpdateDispatcher(rec.processor);
    const gates = [];
    for (let userId = 1; userId <= 100; userId++) {
      gates.push(rec.gate(userId));
      await dispatcher.enqueue(privateMessage(userId, userId));
    }
    await settle();
    expect(rec.running).toBe(16);
    expect(dispatcher.snapshot()).toMatchObject({
      inFlight: 16,
      queued: 84,
      activePrincipals: 100,
    });
    // Release in a scrambled order; each release lets exactly one more start.
    for (let index = 0; index < 100; index++) {
      gates[(index * 37) % 100]?.resolve();
      await settle();
      expect(rec.running).toBeLessThanOrEqual(16);
    }
    await dispatcher.drain();
    expect(rec.maxRunning).toBe(16);
    expect(new Set(rec.finished).size).toBe(100);
  });

  it("updates waiting in a key's queue hold no processor slot", async () => {
    const rec = recorder();
    const dispatcher = new UpdateDispatcher(rec.processor, { maxConcurrency: 2 });
    const gate = rec.gate(1);
    for (let id = 1; id <= 20; id++) await dispatcher.enqueue(groupMessage(id, -100, 42));
    await dispatcher.enqueue(groupMessage(21, -100, 77));
    await settle();
    // 19 updates wait behind update 1, yet the other principal runs at once.
    expect(rec.started).toEqual([1, 21]);
    gate.resolve();
    await dispatcher.drain();
    expect(rec.maxRunning).toBe(2);
  });

  it("processor slots go to waiting principals in FIFO order", async () => {
    const rec = recorder();
    const dispatcher = new UpdateDispatcher(rec.processor, { maxConcurrency: 1 });
    const gate = rec.gate(1);
    for (const [id, userId] of [
      [1, 1],
      [2, 2],
      [3, 3],
      [4, 4],
    ] as const) {
      await dispatcher.enqueue(privateMessage(id, userId));
    }
    gate.resolve();
    await dispatcher.drain();
    expect(rec.started).toEqual([1, 2, 3, 4]);
  });
});
