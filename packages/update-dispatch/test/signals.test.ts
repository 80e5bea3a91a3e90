// Abort listeners stay bounded: running processor calls never share a signal, a signal is handed
// on only when pristine, waiting calls that share one caller signal add one listener to it, and
// settled calls leave none behind.

import { getEventListeners } from "node:events";
import { ManualClock } from "@telepace/core";
import { describe, expect, it } from "vitest";
import { UpdateDispatcher, type UpdateProcessor } from "../src/index.js";
import { privateMessage } from "./fixtures.js";
import { fullPrincipal, recorder, settle } from "./harness.js";

const abortListeners = (signal: AbortSignal): number => getEventListeners(signal, "abort").length;

describe("processor signals", () => {
  it.each([
    ["without a timeout", {}],
    ["with a timeout", { timeoutMs: 60_000 }],
  ])(
    "a signal with a listener left on it is never handed on (%s): the listener dies with it",
    async (_, options) => {
      const signals: AbortSignal[] = [];
      // A careless processor: it subscribes to its signal and never unsubscribes.
      const processor: UpdateProcessor = async (_update, signal) => {
        signal.addEventListener("abort", () => {});
        signals.push(signal);
      };
      const dispatcher = new UpdateDispatcher(processor, options);
      for (let id = 1; id <= 200; id++) await dispatcher.enqueue(privateMessage(id, id % 40));
      await dispatcher.drain();
      expect(signals).toHaveLength(200);
      expect(new Set(signals).size).toBe(200);
      for (const signal of signals) expect(abortListeners(signal)).toBe(1);
    },
  );

  it("concurrent calls never share a signal, and a reused one is pristine", async () => {
    const clock = new ManualClock();
    const seen: { signal: AbortSignal; aborted: boolean; listeners: number }[] = [];
    let running = new Set<AbortSignal>();
    let overlaps = 0;
    const processor: UpdateProcessor = async (_update, signal) => {
      if (running.has(signal)) overlaps++;
      running.add(signal);
      seen.push({ signal, aborted: signal.aborted, listeners: abortListeners(signal) });
      await clock.sleep(1, { signal }); // adds a listener and removes it again
      running.delete(signal);
    };
    const dispatcher = new UpdateDispatcher(processor, { clock, maxConcurrency: 4 });
    for (let id = 1; id <= 40; id++) await dispatcher.enqueue(privateMessage(id, id % 10));
    for (let tick = 0; tick < 40; tick++) await clock.advance(1);
    await dispatcher.drain();
    running = new Set();
    expect(overlaps).toBe(0);
    expect(seen).toHaveLength(40);
    for (const call of seen) expect(call).toMatchObject({ aborted: false, listeners: 0 });
    // Signals that ended clean are handed on: at most the concurrency limit were ever created.
    expect(new Set(seen.map((call) => call.signal)).size).toBeLessThanOrEqual(4);
  });

  it("an aborted signal, or one of a call that may still run, is never handed on", async () => {
    const clock = new ManualClock();
    const signals: AbortSignal[] = [];
    const processor: UpdateProcessor = (update, signal) => {
      signals.push(signal);
      if (update.update_id === 1) return new Promise(() => {}); // times out
      if (update.update_id === 2) {
        // A native promise whose own `then` throws: failed, but its work may go on.
        const promise = new Promise(() => {});
        // biome-ignore lint/suspicious/noThenProperty: a hostile `then` is the point of the test
        Object.defineProperty(promise, "then", {
          value: () => {
            throw new Error("hostile");
          },
        });
        return promise;
      }
      return undefined;
    };
    const dispatcher = new UpdateDispatcher(processor, { clock, timeoutMs: 10, maxConcurrency: 1 });
    for (let id = 1; id <= 4; id++) await dispatcher.enqueue(privateMessage(id, 42));
    await clock.advance(10);
    await dispatcher.drain();
    expect(signals).toHaveLength(4);
    expect(signals[0]?.aborted).toBe(true);
    expect(signals.slice(1)).not.toContain(signals[0]);
    expect(signals.slice(2)).not.toContain(signals[1]);
    // Update 3 returned at once with nothing left on its signal, so 4 may get the same one.
    expect(signals[3]?.aborted).toBe(false);
  });

  it("close still aborts every running call's own signal", async () => {
    const rec = recorder();
    const dispatcher = new UpdateDispatcher(rec.processor);
    for (let id = 1; id <= 3; id++) {
      rec.gate(id);
      await dispatcher.enqueue(privateMessage(id, id));
    }
    await settle();
    const result = await dispatcher.close({ timeoutMs: 0 });
    expect(result.interrupted).toHaveLength(3);
    for (const id of [1, 2, 3]) {
      expect(rec.signals.get(id)?.reason).toMatchObject({ code: "ERR_DISPATCHER_CLOSED" });
    }
  });
});

describe("caller signals", () => {
  it("waiting calls sharing one signal add one listener, removed once they are accepted", async () => {
    const rec = recorder();
    const dispatcher = new UpdateDispatcher(rec.processor, { maxActivePrincipals: 1 });
    const gate = rec.gate(1);
    await dispatcher.enqueue(privateMessage(1, 1));
    const controller = new AbortController();
    const { signal } = controller;
    const waiting = Array.from({ length: 200 }, (_, index) =>
      dispatcher.enqueue(privateMessage(index + 2, (index % 50) + 2), { wait: true, signal }),
    );
    expect(dispatcher.snapshot().waiting).toBe(200);
    expect(abortListeners(signal)).toBe(1);
    gate.resolve();
    const results = await Promise.all(waiting);
    expect(results.every((result) => result.status === "accepted")).toBe(true);
    expect(abortListeners(signal)).toBe(0);
    await dispatcher.drain();
  });

  it("aborting the shared signal withdraws every waiting call and leaves no listener", async () => {
    const { rec, dispatcher, gate } = await fullPrincipal();
    const controller = new AbortController();
    const { signal } = controller;
    const waiting = Array.from({ length: 100 }, (_, index) =>
      dispatcher.enqueue(privateMessage(index + 3, 42), { wait: true, signal }),
    );
    // One more waiter under its own signal, to show the shared abort withdraws only its own.
    const other = dispatcher.enqueue(privateMessage(200, 42), { wait: true });
    expect(abortListeners(signal)).toBe(1);
    const reason = new Error("poller stopping");
    controller.abort(reason);
    for (const call of waiting) await expect(call).rejects.toBe(reason);
    expect(abortListeners(signal)).toBe(0);
    expect(dispatcher.snapshot().waiting).toBe(1);
    gate.resolve();
    expect((await other).status).toBe("accepted");
    await dispatcher.drain();
    expect(rec.finished).toEqual([1, 2, 200]);
  });

  it("drains and close under one signal share one listener, removed when they settle", async () => {
    const rec = recorder();
    const dispatcher = new UpdateDispatcher(rec.processor);
    const gate = rec.gate(1);
    await dispatcher.enqueue(privateMessage(1, 42));
    const { signal } = new AbortController();
    const drains = Array.from({ length: 20 }, () => dispatcher.drain({ signal }));
    const closing = dispatcher.close({ signal });
    expect(abortListeners(signal)).toBe(1);
    gate.resolve();
    await Promise.all(drains);
    expect((await closing).status).toBe("drained");
    expect(abortListeners(signal)).toBe(0);
  });
});
