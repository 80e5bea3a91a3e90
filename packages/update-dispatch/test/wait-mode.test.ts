// enqueue(update, { wait: true, signal }): backpressure for pollers instead of rejection.

import { describe, expect, it } from "vitest";
import { type EnqueueResult, UpdateDispatcher } from "../src/index.js";
import { privateMessage } from "./fixtures.js";
import { fullPrincipal, recorder, settle } from "./harness.js";

function track(promise: Promise<EnqueueResult>): { result: EnqueueResult | undefined } {
  const box: { result: EnqueueResult | undefined } = { result: undefined };
  promise.then((result) => {
    box.result = result;
  });
  return box;
}

describe("wait mode", () => {
  it("waits for room in a full principal queue, then is accepted and processed in order", async () => {
    const { rec, dispatcher, gate } = await fullPrincipal();
    const third = track(dispatcher.enqueue(privateMessage(3, 42), { wait: true }));
    const fourth = track(dispatcher.enqueue(privateMessage(4, 42), { wait: true }));
    await settle();
    expect(third.result).toBeUndefined();
    expect(dispatcher.snapshot()).toMatchObject({ waiting: 2, queued: 1, inFlight: 1 });

    gate.resolve();
    await dispatcher.drain();
    expect(third.result).toEqual({ status: "accepted", keyKind: "private" });
    expect(fourth.result).toEqual({ status: "accepted", keyKind: "private" });
    expect(rec.finished).toEqual([1, 2, 3, 4]);
    expect(dispatcher.snapshot().rejected["principal-queue-full"]).toBe(0);
  });

  it("waits for an active-principal slot; principals are admitted in FIFO order", async () => {
    const rec = recorder();
    const dispatcher = new UpdateDispatcher(rec.processor, { maxActivePrincipals: 1 });
    const gate = rec.gate(1);
    await dispatcher.enqueue(privateMessage(1, 42));
    const second = track(dispatcher.enqueue(privateMessage(2, 77), { wait: true }));
    const third = track(dispatcher.enqueue(privateMessage(3, 88), { wait: true }));
    const fourth = track(dispatcher.enqueue(privateMessage(4, 77), { wait: true }));
    await settle();
    expect([second.result, third.result, fourth.result]).toEqual([undefined, undefined, undefined]);
    expect(dispatcher.snapshot()).toMatchObject({ waiting: 3, activePrincipals: 1 });

    gate.resolve();
    await dispatcher.drain();
    // 77 waited first, so it is admitted first with both of its updates; then 88.
    expect(rec.finished).toEqual([1, 2, 4, 3]);
    expect(rec.maxRunning).toBe(1);
  });

  it("a later call without wait never overtakes waiting calls of the same principal", async () => {
    const rec = recorder();
    const dispatcher = new UpdateDispatcher(rec.processor, { maxQueuedPerPrincipal: 1 });
    const gate = rec.gate(1);
    const second = rec.gate(2);
    await dispatcher.enqueue(privateMessage(1, 42));
    await dispatcher.enqueue(privateMessage(2, 42));
    const waiting = track(dispatcher.enqueue(privateMessage(3, 42), { wait: true }));
    gate.resolve();
    // Update 1 finishes and 2 starts; the room that frees goes to the waiter, not to 4.
    await settle();
    expect(waiting.result?.status).toBe("accepted");
    expect((await dispatcher.enqueue(privateMessage(4, 42))).status).toBe("rejected");
    second.resolve();
    await dispatcher.drain();
    expect(rec.finished).toEqual([1, 2, 3]);
  });

  it("an enqueue without wait for a principal waiting to be admitted is rejected, not reordered", async () => {
    const rec = recorder();
    const dispatcher = new UpdateDispatcher(rec.processor, { maxActivePrincipals: 1 });
    const gate = rec.gate(1);
    await dispatcher.enqueue(privateMessage(1, 42));
    const waiting = track(dispatcher.enqueue(privateMessage(2, 77), { wait: true }));
    expect(await dispatcher.enqueue(privateMessage(3, 77))).toEqual({
      status: "rejected",
      reason: "active-principals-full",
    });
    gate.resolve();
    await dispatcher.drain();
    expect(waiting.result?.status).toBe("accepted");
    expect(rec.finished).toEqual([1, 2]);
  });

  it("accepts at once when there is room", async () => {
    const dispatcher = new UpdateDispatcher(() => {});
    expect(await dispatcher.enqueue(privateMessage(1, 42), { wait: true })).toEqual({
      status: "accepted",
      keyKind: "private",
    });
    expect(dispatcher.snapshot().waiting).toBe(0);
    await dispatcher.drain();
  });

  it("aborting a waiting call withdraws the update and rejects with the signal's reason", async () => {
    const { rec, dispatcher, gate } = await fullPrincipal();
    const controller = new AbortController();
    const waiting = dispatcher.enqueue(privateMessage(3, 42), {
      wait: true,
      signal: controller.signal,
    });
    const after = track(dispatcher.enqueue(privateMessage(4, 42), { wait: true }));
    const reason = new Error("poller stopping");
    controller.abort(reason);
    await expect(waiting).rejects.toBe(reason);
    expect(dispatcher.snapshot().waiting).toBe(1);

    gate.resolve();
    await dispatcher.drain();
    expect(after.result?.status).toBe("accepted");
    expect(rec.finished).toEqual([1, 2, 4]);
  });

  it("aborting the only waiter of a principal awaiting admission removes that principal", async () => {
    const rec = recorder();
    const dispatcher = new UpdateDispatcher(rec.processor, { maxActivePrincipals: 1 });
    const gate = rec.gate(1);
    await dispatcher.enqueue(privateMessage(1, 42));
    const controller = new AbortController();
    const withdrawn = dispatcher.enqueue(privateMessage(2, 77), {
      wait: true,
      signal: controller.signal,
    });
    const next = track(dispatcher.enqueue(privateMessage(3, 88), { wait: true }));
    controller.abort();
    await expect(withdrawn).rejects.toMatchObject({ name: "AbortError" });
    gate.resolve();
    await dispatcher.drain();
    expect(next.result?.status).toBe("accepted");
    expect(rec.finished).toEqual([1, 3]);
  });

  it("an already aborted signal rejects at once, even with room", async () => {
    const rec = recorder();
    const dispatcher = new UpdateDispatcher(rec.processor);
    const reason = new Error("gone");
    await expect(
      dispatcher.enqueue(privateMessage(1, 42), { wait: true, signal: AbortSignal.abort(reason) }),
    ).rejects.toBe(reason);
    await expect(
      dispatcher.enqueue(privateMessage(2, 42), { signal: AbortSignal.abort(reason) }),
    ).rejects.toBe(reason);
    await dispatcher.drain();
    expect(rec.started).toEqual([]);
  });

  it("a signal that aborts after acceptance changes nothing", async () => {
    const { rec, dispatcher, gate } = await fullPrincipal();
    const controller = new AbortController();
    const waiting = track(
      dispatcher.enqueue(privateMessage(3, 42), { wait: true, signal: controller.signal }),
    );
    gate.resolve();
    await settle();
    expect(waiting.result?.status).toBe("accepted");
    controller.abort();
    await dispatcher.drain();
    expect(rec.finished).toEqual([1, 2, 3]);
  });

  it("bounds the number of waiting calls", async () => {
    const rec = recorder();
    const dispatcher = new UpdateDispatcher(rec.processor, {
      maxQueuedPerPrincipal: 1,
      maxWaitingEnqueues: 2,
    });
    const gate = rec.gate(1);
    await dispatcher.enqueue(privateMessage(1, 42));
    await dispatcher.enqueue(privateMessage(2, 42));
    const waiting = [3, 4].map((id) =>
      track(dispatcher.enqueue(privateMessage(id, 42), { wait: true })),
    );
    expect(await dispatcher.enqueue(privateMessage(5, 42), { wait: true })).toEqual({
      status: "rejected",
      reason: "waiting-full",
    });
    gate.resolve();
    await dispatcher.drain();
    expect(waiting.map((box) => box.result?.status)).toEqual(["accepted", "accepted"]);
    expect(rec.finished).toEqual([1, 2, 3, 4]);
    expect(dispatcher.snapshot().rejected["waiting-full"]).toBe(1);
  });

  it("a poller batch enqueued all at once keeps each principal's order", async () => {
    const rec = recorder();
    const dispatcher = new UpdateDispatcher(rec.processor, {
      maxQueuedPerPrincipal: 2,
      maxActivePrincipals: 2,
      maxConcurrency: 2,
    });
    const batch = Array.from({ length: 30 }, (_, index) =>
      privateMessage(index + 1, (index % 5) + 1),
    );
    const results = await Promise.all(
      batch.map((update) => dispatcher.enqueue(update, { wait: true })),
    );
    expect(results.every((result) => result.status === "accepted")).toBe(true);
    await dispatcher.drain();
    for (let userId = 1; userId <= 5; userId++) {
      const ids = batch
        .filter((update) => update.message?.from.id === userId)
        .map((update) => update.update_id);
      expect(rec.started.filter((id) => ids.includes(id))).toEqual(ids);
    }
  });
});
