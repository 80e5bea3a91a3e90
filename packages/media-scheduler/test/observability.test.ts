// Observability: frozen snapshots at three levels, monotonic counters, diagnostics_channel
// events with clock-based durations, the optional logger, and no secret in any of them.

import { ManualClock } from "@telepace/core";
import { recordChannels, spyLogger, unhandledRejectionsOf } from "@telepace/testing";
import { describe, expect, it } from "vitest";
import { MediaSchedulerRegistry, mediaSchedulerChannels } from "../src/index.js";
import { grantTurn, MiB, permitOf, recordEvents, tick, track, UNIT } from "./helpers.js";

describe("snapshots", () => {
  it("describe every transfer at a scheduler: state, slot, queue, grants and deficit", async () => {
    const registry = new MediaSchedulerRegistry({
      download: {
        maxBytesInFlight: 2 * UNIT,
        maxActiveSmallTransfers: 2,
        maxActiveLargeTransfers: 2,
      },
    });
    const open = (sizeBytes: number | undefined) =>
      registry.open({ dc: 1, direction: "download", sizeBytes });
    const active = open(1);
    const queued = open(1);
    const slotless = open(2);
    const idle = open(undefined);
    const held = await active.acquire(2 * UNIT);
    const q = track(queued.acquire(UNIT, { priority: "background" }));
    const s = track(slotless.acquire(UNIT));
    const snapshot = active.schedulerSnapshot();
    expect(snapshot).toEqual({
      dc: 1,
      direction: "download",
      maxBytesInFlight: 2 * UNIT,
      maxLargeBytesInFlight: 4 * MiB,
      activeBytes: 2 * UNIT,
      largeActiveBytes: 0,
      queuedBytes: 2 * UNIT,
      queuedRequests: 2,
      maxActiveSmallTransfers: 2,
      maxActiveLargeTransfers: 2,
      smallSlotsInUse: 2,
      largeSlotsInUse: 0,
      transfersWaitingForSlot: 1,
      transfersWaitingForLargeBytes: 0,
      activeTransfers: 1,
      queuedTransfers: 2,
      quantumBytes: 2 * UNIT,
      foregroundGrantsSinceBackground: 0,
      grants: 1,
      grantedBytes: 2 * UNIT,
      releases: 0,
      transfers: [
        entry(active.id, "active", {
          livePermits: 1,
          activeBytes: 2 * UNIT,
          grants: 1,
          grantedBytes: 2 * UNIT,
        }),
        entry(queued.id, "queued", {
          headPriority: "background",
          queuedRequests: 1,
          queuedBytes: UNIT,
        }),
        entry(slotless.id, "waiting-for-slot", {
          headPriority: "foreground",
          queuedRequests: 1,
          queuedBytes: UNIT,
        }),
        { ...entry(idle.id, "idle", {}), sizeClass: "large" },
      ],
    });
    held.release();
    await tick();
    permitOf(q).release();
    await tick();
    permitOf(s).release();
  });

  it("describe a transfer across its current and draining bindings", async () => {
    const registry = new MediaSchedulerRegistry();
    const transfer = registry.open({
      dc: 1,
      direction: "upload",
      sizeBytes: 30 * MiB,
      priority: "background",
    });
    const first = await transfer.acquire(UNIT);
    transfer.rebind(2);
    const second = await transfer.acquire(2 * UNIT);
    expect(transfer.snapshot()).toEqual({
      id: "upload-1",
      dc: 2,
      direction: "upload",
      sizeBytes: 30 * MiB,
      sizeClass: "large",
      priority: "background",
      isClosed: false,
      queuedRequests: 0,
      queuedBytes: 0,
      livePermits: 2,
      activeBytes: 3 * UNIT,
      grants: 2,
      grantedBytes: 3 * UNIT,
      deficitBytes: 0,
      drainingDcs: [1],
    });
    first.release();
    second.release();
    transfer.close();
    expect(transfer.snapshot()).toMatchObject({ isClosed: true, grants: 2, drainingDcs: [] });
  });

  it("are fresh frozen objects; counters only grow", async () => {
    const registry = new MediaSchedulerRegistry();
    const transfer = registry.open({ dc: 1, direction: "download", sizeBytes: 1 });
    const before = registry.snapshot();
    expect(Object.isFrozen(before)).toBe(true);
    expect(Object.isFrozen(before.counters)).toBe(true);
    expect(Object.isFrozen(before.schedulers)).toBe(true);
    expect(Object.isFrozen(before.schedulers[0])).toBe(true);
    expect(Object.isFrozen(before.schedulers[0]?.transfers[0])).toBe(true);
    expect(Object.isFrozen(transfer.snapshot())).toBe(true);
    (await transfer.acquire(UNIT)).release();
    const after = registry.snapshot();
    expect(before.counters.grants).toBe(0);
    expect(after.counters).toMatchObject({
      transfersOpened: 1,
      grants: 1,
      releases: 1,
      schedulersCreated: 1,
    });
    expect(after).not.toBe(before);
    for (const [key, value] of Object.entries(before.counters)) {
      expect(after.counters[key as keyof typeof after.counters]).toBeGreaterThanOrEqual(value);
    }
  });
});

describe("diagnostics channels", () => {
  it("publish grant and release with clock-measured wait and hold times", async () => {
    const clock = new ManualClock(1_000);
    const registry = new MediaSchedulerRegistry({ clock, upload: { maxBytesInFlight: UNIT } });
    const transfer = registry.open({ dc: "api.telegram.org", direction: "upload", sizeBytes: 1 });
    const recorder = recordEvents();
    const held = await transfer.acquire(100);
    const waiting = track(transfer.acquire(UNIT, { priority: "background" }));
    await clock.advance(250);
    held.release();
    await tick();
    await clock.advance(40);
    permitOf(waiting).release();
    transfer.close();
    recorder.stop();
    expect(recorder.events).toEqual([
      {
        type: "grant",
        dc: "api.telegram.org",
        direction: "upload",
        transferId: "upload-1",
        permitId: 1,
        priority: "foreground",
        bytes: 100,
        chargedBytes: UNIT,
        waitedMs: 0,
        activeBytes: UNIT,
        maxBytesInFlight: UNIT,
      },
      {
        type: "release",
        dc: "api.telegram.org",
        direction: "upload",
        transferId: "upload-1",
        permitId: 1,
        chargedBytes: UNIT,
        heldMs: 250,
        activeBytes: 0,
      },
      expect.objectContaining({
        type: "grant",
        permitId: 2,
        priority: "background",
        waitedMs: 250,
      }),
      expect.objectContaining({ type: "release", permitId: 2, heldMs: 40 }),
      { type: "evict", dc: "api.telegram.org", direction: "upload", grants: 2 },
    ]);
  });

  it("are named telepace:media-scheduler:<event>", () => {
    expect(mediaSchedulerChannels).toEqual({
      grant: "telepace:media-scheduler:grant",
      release: "telepace:media-scheduler:release",
      rebind: "telepace:media-scheduler:rebind",
      evict: "telepace:media-scheduler:evict",
    });
  });

  it("tolerate a subscriber that releases a permit from inside a grant event", async () => {
    const registry = new MediaSchedulerRegistry({ upload: { maxBytesInFlight: 2 * UNIT } });
    const transfer = registry.open({ dc: 1, direction: "upload", sizeBytes: 1 });
    const first = await transfer.acquire(UNIT);
    const second = await transfer.acquire(UNIT);
    const waiting = [track(transfer.acquire(UNIT)), track(transfer.acquire(UNIT))];
    const onGrant = (message: unknown): void => {
      // Re-enters the scheduler while it is granting.
      if ((message as { permitId: number }).permitId === 3) second.release();
    };
    {
      using _grants = recordChannels({ grant: mediaSchedulerChannels.grant }, onGrant);
      first.release();
      await grantTurn();
    }
    await tick();
    // The running dispatch saw the re-entrant release and granted the second waiter too.
    expect(waiting.map((w) => w.status)).toEqual(["fulfilled", "fulfilled"]);
    expect(transfer.schedulerSnapshot()).toMatchObject({ activeBytes: 2 * UNIT, releases: 2 });
    for (const w of waiting) permitOf(w).release();
  });
});

describe("logger", () => {
  it("gets debug lines for scheduler creation, rebind and eviction", async () => {
    const logger = spyLogger();
    const registry = new MediaSchedulerRegistry({ logger });
    const transfer = registry.open({ dc: 2, direction: "download", sizeBytes: 1 });
    transfer.rebind(4);
    transfer.close();
    // Debug lines only: nothing at warn or above.
    expect(logger.calls.map(({ level, fields, message }) => [level, fields, message])).toEqual([
      ["debug", { dc: 2, direction: "download" }, "media scheduler created"],
      ["debug", { dc: 4, direction: "download" }, "media scheduler created"],
      ["debug", { dc: 2, direction: "download" }, "media scheduler evicted"],
      [
        "debug",
        { transferId: "download-1", fromDc: 2, toDc: 4, moved: 0 },
        "media transfer rebound",
      ],
      ["debug", { dc: 4, direction: "download" }, "media scheduler evicted"],
    ]);
  });

  it("must be pino-compatible", () => {
    expect(() => new MediaSchedulerRegistry({ logger: { debug() {} } as never })).toThrow(
      new TypeError(
        "Expected `logger` to be an object with `debug`, `info`, `warn`, `error`, got an object without `info`, `warn`, `error`",
      ),
    );
    expect(() => new MediaSchedulerRegistry({ logger: undefined })).not.toThrow();
  });

  it.each([
    [
      "throws",
      () => {
        throw new Error("logger down");
      },
    ],
    ["returns a rejected promise", () => Promise.reject(new Error("transport down"))],
  ])("that %s breaks nothing", async (_, method) => {
    const logger = spyLogger({ answer: method });
    const rejections = await unhandledRejectionsOf(async () => {
      const registry = new MediaSchedulerRegistry({
        logger,
        upload: { maxBytesInFlight: 2 * UNIT },
      });
      const transfer = registry.open({ dc: 2, direction: "upload", sizeBytes: 1 });
      const held = await transfer.acquire(UNIT);
      const waiting = track(transfer.acquire(2 * UNIT));
      registry.configure({ upload: { maxBytesInFlight: UNIT } });
      await tick();
      expect(waiting.status).toBe("rejected");
      expect(waiting.reason).toBeInstanceOf(RangeError);
      transfer.rebind(3);
      held.release();
      transfer.close();
      await registry.close();
      await tick();
      expect(registry.size).toBe(0);
    });
    expect(logger.calls.length).toBeGreaterThan(0);
    expect(rejections).toEqual([]);
  });
});

describe("secrets", () => {
  it("never reach an error, snapshot or event: a data centre cannot be a URL", () => {
    const token = "123456789:AAH-secret-token_value";
    const registry = new MediaSchedulerRegistry();
    const recorder = recordEvents();
    const attempts = [
      `https://api.telegram.org/file/bot${token}/documents/file_7.pdf`,
      `api.telegram.org/bot${token}`,
    ];
    for (const dc of attempts) {
      let caught: unknown;
      try {
        registry.open({ dc, direction: "download" });
      } catch (error) {
        caught = error;
      }
      expect(caught).toBeInstanceOf(RangeError);
      expect(String((caught as Error).message)).not.toContain("secret");
      expect(String((caught as Error).stack)).not.toContain("secret");
    }
    recorder.stop();
    expect(JSON.stringify(registry.snapshot())).not.toContain("secret");
    expect(recorder.events).toEqual([]);
  });
});

function entry(transferId: string, state: string, fields: Record<string, unknown>) {
  return {
    transferId,
    sizeClass: "small",
    state,
    isCurrent: true,
    headPriority: undefined,
    queuedRequests: 0,
    queuedBytes: 0,
    livePermits: 0,
    activeBytes: 0,
    grants: 0,
    grantedBytes: 0,
    deficitBytes: 0,
    ...fields,
  };
}
