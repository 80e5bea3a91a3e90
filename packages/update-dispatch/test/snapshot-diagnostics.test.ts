// snapshot() and the diagnostics_channel events.

import { ManualClock } from "@telepace/core";
import { recordChannels } from "@telepace/testing";
import { describe, expect, it } from "vitest";
import {
  type UpdateDispatchEvent,
  UpdateDispatcher,
  updateDispatchChannels,
} from "../src/index.js";
import { groupMessage, pollUpdate, privateMessage } from "./fixtures.js";
import { recorder, settle } from "./harness.js";

describe("snapshot", () => {
  it("starts at zero", () => {
    const stats = new UpdateDispatcher(() => {}).snapshot();
    expect(stats).toEqual({
      queued: 0,
      queuedByKind: {
        private: 0,
        "group-user": 0,
        "group-control": 0,
        chat: 0,
        user: 0,
        business: 0,
        guest: 0,
        other: 0,
      },
      activePrincipals: 0,
      inFlight: 0,
      waiting: 0,
      abandoned: 0,
      watermark: undefined,
      isClosed: false,
      accepted: 0,
      duplicates: 0,
      succeeded: 0,
      failed: 0,
      timedOut: 0,
      interrupted: 0,
      rejected: {
        "principal-queue-full": 0,
        "active-principals-full": 0,
        "waiting-full": 0,
        closed: 0,
      },
    });
  });

  it("reports queued updates per key kind, active principals and in-flight processors", async () => {
    const rec = recorder();
    const dispatcher = new UpdateDispatcher(rec.processor, { maxConcurrency: 1 });
    const gate = rec.gate(1);
    await dispatcher.enqueue(privateMessage(1, 42));
    await dispatcher.enqueue(privateMessage(2, 42));
    await dispatcher.enqueue(groupMessage(3, -100, 42));
    await dispatcher.enqueue(pollUpdate(4));
    await settle();
    const stats = dispatcher.snapshot();
    expect(stats).toMatchObject({ queued: 3, activePrincipals: 3, inFlight: 1, accepted: 4 });
    expect(stats.queuedByKind).toMatchObject({ private: 1, "group-user": 1, other: 1 });
    gate.resolve();
    await dispatcher.drain();
    expect(dispatcher.snapshot()).toMatchObject({ queued: 0, activePrincipals: 0, succeeded: 4 });
    expect(dispatcher.snapshot().queuedByKind.private).toBe(0);
  });

  it("returns a fresh frozen snapshot each time", async () => {
    const dispatcher = new UpdateDispatcher(() => {});
    const before = dispatcher.snapshot();
    await dispatcher.enqueue(privateMessage(1, 42));
    expect(Object.isFrozen(before)).toBe(true);
    expect(Object.isFrozen(before.queuedByKind)).toBe(true);
    expect(Object.isFrozen(before.rejected)).toBe(true);
    expect(before.accepted).toBe(0);
    expect(dispatcher.snapshot().accepted).toBe(1);
    await dispatcher.drain();
  });
});

describe("diagnostics channels", () => {
  const names = Object.values(updateDispatchChannels);

  it("are named telepace:update-dispatch:<event>", () => {
    expect(names).toEqual([
      "telepace:update-dispatch:accepted",
      "telepace:update-dispatch:rejected",
      "telepace:update-dispatch:started",
      "telepace:update-dispatch:finished",
    ]);
  });

  it("publish accepted, rejected, started and finished with safe metadata only", async () => {
    using recorder = recordChannels<UpdateDispatchEvent>(updateDispatchChannels);
    const { events } = recorder;
    const clock = new ManualClock();
    const dispatcher = new UpdateDispatcher(
      async (update) => {
        await clock.sleep(5);
        if (update.update_id === 2) throw new Error("secret");
      },
      { clock, maxQueuedPerPrincipal: 1 },
    );
    await dispatcher.enqueue(privateMessage(1, 42, "secret"));
    await dispatcher.enqueue(privateMessage(2, 42, "secret"));
    await dispatcher.enqueue(privateMessage(3, 42, "secret"));
    await clock.advance(5);
    await clock.advance(5);
    await dispatcher.drain();
    expect(events).toEqual([
      { type: "accepted", updateId: 1, keyKind: "private" },
      { type: "started", updateId: 1, keyKind: "private", waitedMs: 0 },
      { type: "accepted", updateId: 2, keyKind: "private" },
      { type: "rejected", updateId: 3, reason: "principal-queue-full" },
      { type: "finished", updateId: 1, keyKind: "private", outcome: "succeeded", durationMs: 5 },
      { type: "started", updateId: 2, keyKind: "private", waitedMs: 5 },
      { type: "finished", updateId: 2, keyKind: "private", outcome: "failed", durationMs: 5 },
    ]);
    expect(JSON.stringify(events)).not.toContain("secret");
    expect(events.every((event) => Object.isFrozen(event))).toBe(true);
  });

  it("time only what entered a stage while somebody listened (the clock is read only then)", async () => {
    const clock = new ManualClock();
    const reads = { count: 0 };
    const counting = Object.assign(Object.create(clock) as ManualClock, {
      now: () => {
        reads.count++;
        return clock.now();
      },
    });
    const dispatcher = new UpdateDispatcher(() => clock.sleep(5), { clock: counting });
    await dispatcher.enqueue(privateMessage(1, 42)); // nobody listens: enqueued and started untimed
    await dispatcher.enqueue(privateMessage(2, 42)); // queued behind 1, untimed
    expect(reads.count).toBe(0);
    using recorder = recordChannels<UpdateDispatchEvent>(updateDispatchChannels);
    await dispatcher.enqueue(privateMessage(3, 42));
    await clock.advance(5); // 1 ends (no finished: its start was untimed); 2 starts (no started)
    await clock.advance(5); // 2 ends, timed from its start; 3 starts, timed from its enqueue
    await clock.advance(5);
    await dispatcher.drain();
    expect(recorder.events.filter((event) => event.type !== "accepted")).toEqual([
      { type: "finished", updateId: 2, keyKind: "private", outcome: "succeeded", durationMs: 5 },
      { type: "started", updateId: 3, keyKind: "private", waitedMs: 10 },
      { type: "finished", updateId: 3, keyKind: "private", outcome: "succeeded", durationMs: 5 },
    ]);
  });
});
