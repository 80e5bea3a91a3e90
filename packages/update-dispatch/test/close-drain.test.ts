// drain() and close(): graceful shutdown with a deadline and a typed list of what was left.

import { ManualClock } from "@telepace/core";
import { describe, expect, it } from "vitest";
import { UpdateDispatchError, UpdateDispatcher } from "../src/index.js";
import { privateMessage } from "./fixtures.js";
import { fullPrincipal, recorder, settle } from "./harness.js";

describe("drain", () => {
  it("resolves idle at once when nothing is pending", async () => {
    const dispatcher = new UpdateDispatcher(() => {});
    expect(await dispatcher.drain()).toEqual({ status: "idle" });
  });

  it("resolves idle once every accepted update finished, and keeps accepting", async () => {
    const rec = recorder();
    const dispatcher = new UpdateDispatcher(rec.processor);
    const gate = rec.gate(1);
    await dispatcher.enqueue(privateMessage(1, 42));
    await dispatcher.enqueue(privateMessage(2, 42));
    let drained = false;
    const drain = dispatcher.drain().then((result) => {
      drained = true;
      return result;
    });
    await settle();
    expect(drained).toBe(false);
    gate.resolve();
    expect(await drain).toEqual({ status: "idle" });
    expect(rec.finished).toEqual([1, 2]);
    expect((await dispatcher.enqueue(privateMessage(3, 42))).status).toBe("accepted");
    await dispatcher.drain();
  });

  it("resolves timed-out at the deadline", async () => {
    const clock = new ManualClock();
    const rec = recorder();
    const dispatcher = new UpdateDispatcher(rec.processor, { clock });
    const gate = rec.gate(1);
    await dispatcher.enqueue(privateMessage(1, 42));
    const drain = dispatcher.drain({ timeoutMs: 1_000 });
    await clock.advance(1_000);
    expect(await drain).toEqual({ status: "timed-out" });
    expect(clock.pendingTimers).toBe(0);
    gate.resolve();
    await dispatcher.drain();
  });

  it("rejects with the signal's reason when aborted, and leaves no timer behind", async () => {
    const clock = new ManualClock();
    const rec = recorder();
    const dispatcher = new UpdateDispatcher(rec.processor, { clock });
    const gate = rec.gate(1);
    await dispatcher.enqueue(privateMessage(1, 42));
    const controller = new AbortController();
    const drain = dispatcher.drain({ timeoutMs: 5_000, signal: controller.signal });
    const reason = new Error("stop waiting");
    controller.abort(reason);
    await expect(drain).rejects.toBe(reason);
    expect(clock.pendingTimers).toBe(0);
    await expect(dispatcher.drain({ signal: AbortSignal.abort(reason) })).rejects.toBe(reason);
    gate.resolve();
    await dispatcher.drain();
    expect(rec.finished).toEqual([1]);
  });

  it("waits for calls waiting for capacity too", async () => {
    const rec = recorder();
    const dispatcher = new UpdateDispatcher(rec.processor, { maxActivePrincipals: 1 });
    const gate = rec.gate(1);
    await dispatcher.enqueue(privateMessage(1, 1));
    const waiting = dispatcher.enqueue(privateMessage(2, 2), { wait: true });
    const drain = dispatcher.drain();
    gate.resolve();
    await drain;
    expect((await waiting).status).toBe("accepted");
    expect(rec.finished).toEqual([1, 2]);
  });
});

describe("close", () => {
  it("lets accepted updates finish and resolves drained", async () => {
    const rec = recorder();
    const dispatcher = new UpdateDispatcher(rec.processor);
    const gate = rec.gate(1);
    for (const id of [1, 2, 3]) await dispatcher.enqueue(privateMessage(id, 42));
    const closing = dispatcher.close();
    expect(dispatcher.isClosed).toBe(true);
    gate.resolve();
    expect(await closing).toEqual({ status: "drained", unstarted: [], interrupted: [] });
    expect(rec.finished).toEqual([1, 2, 3]);
    expect(dispatcher.watermark).toBe(3);
  });

  it("rejects enqueues after close with `closed`", async () => {
    const rec = recorder();
    const dispatcher = new UpdateDispatcher(rec.processor);
    await dispatcher.close();
    expect(await dispatcher.enqueue(privateMessage(1, 42))).toEqual({
      status: "rejected",
      reason: "closed",
    });
    expect(await dispatcher.enqueue(privateMessage(2, 42), { wait: true })).toEqual({
      status: "rejected",
      reason: "closed",
    });
    expect(dispatcher.snapshot().rejected.closed).toBe(2);
    expect(rec.started).toEqual([]);
  });

  it("at the deadline hands back unstarted updates in enqueue order and aborts running ones", async () => {
    const clock = new ManualClock();
    const rec = recorder();
    const dispatcher = new UpdateDispatcher(rec.processor, { clock, maxConcurrency: 2 });
    const gates = [1, 2, 3, 4, 5, 6].map((id) => rec.gate(id));
    const updates = [
      privateMessage(1, 1),
      privateMessage(2, 2),
      privateMessage(3, 3), // waits for a processor slot
      privateMessage(4, 1),
      privateMessage(5, 3),
      privateMessage(6, 2),
    ];
    for (const update of updates) await dispatcher.enqueue(update);
    await clock.flush();
    expect(rec.started).toEqual([1, 2]);

    const closing = dispatcher.close({ timeoutMs: 1_000 });
    await clock.advance(999);
    expect(rec.signals.get(1)?.aborted).toBe(false);
    await clock.advance(1);
    const result = await closing;
    expect(result.status).toBe("timed-out");
    expect(result.unstarted.map((update) => update.update_id)).toEqual([3, 4, 5, 6]);
    expect(result.interrupted.map((update) => update.update_id)).toEqual([1, 2]);
    expect(result.unstarted[0]).toBe(updates[2]);
    expect(rec.signals.get(1)?.reason).toBeInstanceOf(UpdateDispatchError);
    expect(rec.signals.get(1)?.reason).toMatchObject({ code: "ERR_DISPATCHER_CLOSED" });
    expect(dispatcher.snapshot()).toMatchObject({
      interrupted: 2,
      queued: 0,
      inFlight: 0,
      activePrincipals: 0,
      abandoned: 2,
    });
    // Nothing finished, so a poller confirms nothing and gets all six again after a restart.
    expect(dispatcher.watermark).toBeUndefined();

    // Late results of interrupted processors change nothing; no unstarted update ever starts.
    for (const gate of gates) gate.resolve();
    await clock.runAll();
    expect(rec.started).toEqual([1, 2]);
    expect(dispatcher.snapshot()).toMatchObject({ succeeded: 0, abandoned: 0 });
  });

  it("the watermark stays below leftovers after close", async () => {
    const clock = new ManualClock();
    const rec = recorder();
    const dispatcher = new UpdateDispatcher(rec.processor, { clock });
    const gate = rec.gate(11);
    await dispatcher.enqueue(privateMessage(10, 1));
    await dispatcher.enqueue(privateMessage(11, 2));
    await dispatcher.enqueue(privateMessage(12, 2));
    await dispatcher.enqueue(privateMessage(13, 3));
    await clock.flush();
    const result = await dispatcher.close({ timeoutMs: 0 });
    expect(result.interrupted.map((update) => update.update_id)).toEqual([11]);
    expect(result.unstarted.map((update) => update.update_id)).toEqual([12]);
    expect(dispatcher.watermark).toBe(10);
    gate.resolve();
  });

  it("answers waiting calls `closed`, and their updates hold the watermark", async () => {
    const { rec, dispatcher, gate } = await fullPrincipal();
    const waiting = dispatcher.enqueue(privateMessage(3, 42), { wait: true });
    await dispatcher.enqueue(privateMessage(4, 7));
    const closing = dispatcher.close();
    expect(await waiting).toEqual({ status: "rejected", reason: "closed" });
    gate.resolve();
    expect((await closing).status).toBe("drained");
    expect(rec.finished).toEqual(expect.arrayContaining([1, 2, 4]));
    expect(rec.started).not.toContain(3);
    expect(dispatcher.watermark).toBe(2);
  });

  it("returns the same promise when called twice", async () => {
    const dispatcher = new UpdateDispatcher(() => {});
    const first = dispatcher.close();
    expect(dispatcher.close({ timeoutMs: 0 })).toBe(first);
    await first;
  });

  it("a signal ends the grace period early; close still resolves with the leftovers", async () => {
    const clock = new ManualClock();
    const rec = recorder();
    const dispatcher = new UpdateDispatcher(rec.processor, { clock });
    rec.gate(1);
    await dispatcher.enqueue(privateMessage(1, 42));
    await dispatcher.enqueue(privateMessage(2, 42));
    await clock.flush();
    const controller = new AbortController();
    const closing = dispatcher.close({ timeoutMs: 60_000, signal: controller.signal });
    controller.abort();
    const result = await closing;
    expect(result.status).toBe("timed-out");
    expect(result.unstarted.map((update) => update.update_id)).toEqual([2]);
    expect(clock.pendingTimers).toBe(0);
  });

  it("uses closeTimeoutMs by default, and [Symbol.asyncDispose] closes", async () => {
    const clock = new ManualClock();
    const rec = recorder();
    const dispatcher = new UpdateDispatcher(rec.processor, { clock, closeTimeoutMs: 300 });
    rec.gate(1);
    await dispatcher.enqueue(privateMessage(1, 42));
    await clock.flush();
    const disposing = dispatcher[Symbol.asyncDispose]();
    await clock.advance(299);
    expect(rec.signals.get(1)?.aborted).toBe(false);
    await clock.advance(1);
    await disposing;
    expect(rec.signals.get(1)?.aborted).toBe(true);
    expect(dispatcher.isClosed).toBe(true);
  });

  it("works with `await using`", async () => {
    const rec = recorder();
    {
      await using dispatcher = new UpdateDispatcher(rec.processor);
      await dispatcher.enqueue(privateMessage(1, 42));
    }
    expect(rec.finished).toEqual([1]);
  });

  it("an update granted a slot in the same turn as the close deadline never starts", async () => {
    const clock = new ManualClock();
    const started: number[] = [];
    let closing: Promise<unknown> | undefined;
    const dispatcher = new UpdateDispatcher(
      (update, signal) => {
        started.push(update.update_id);
        // Shutting down from inside an abort handler: the deadline comes in the same turn as
        // the slot that update 1 frees is handed to update 2.
        signal.addEventListener("abort", () => {
          closing = dispatcher.close({ timeoutMs: 0 });
        });
        return new Promise(() => {});
      },
      { clock, timeoutMs: 100, maxConcurrency: 1 },
    );
    await dispatcher.enqueue(privateMessage(1, 1));
    await dispatcher.enqueue(privateMessage(2, 2));
    await clock.advance(100);
    await clock.runAll();
    expect(started).toEqual([1]);
    expect(await closing).toMatchObject({ status: "timed-out", interrupted: [] });
    expect(((await closing) as { unstarted: { update_id: number }[] }).unstarted).toEqual([
      privateMessage(2, 2),
    ]);
  });

  it("a drain pending at close resolves when close ends", async () => {
    const clock = new ManualClock();
    const rec = recorder();
    const dispatcher = new UpdateDispatcher(rec.processor, { clock });
    rec.gate(1);
    await dispatcher.enqueue(privateMessage(1, 42));
    const drain = dispatcher.drain();
    await dispatcher.close({ timeoutMs: 0 });
    expect(await drain).toEqual({ status: "idle" });
  });
});
