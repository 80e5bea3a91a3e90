// Random interleavings of open / acquire / abort / release / close / rebind / configure /
// registry close, checked against a model after every step: no grant past the budget, every
// charge returned exactly once, no waiter outliving a close, no deadlock, an empty registry at
// the end.

import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  type MediaDirection,
  type MediaGrantEvent,
  type MediaPermit,
  type MediaPriority,
  MediaSchedulerRegistry,
  type MediaSchedulerSnapshot,
  type MediaTransfer,
} from "../src/index.js";
import { recordEvents, type Tracked, tick, track, UNIT } from "./helpers.js";

type Command =
  | {
      kind: "open";
      dc: number;
      direction: MediaDirection;
      sizeBytes: number | undefined;
      priority: MediaPriority;
    }
  | {
      kind: "acquire";
      transfer: number;
      /** A burst of this many acquires of the same size. */
      count: number;
      units: number;
      priority: MediaPriority | undefined;
      abortable: boolean;
    }
  | { kind: "abort"; acquire: number }
  | { kind: "release"; permit: number; twice: boolean; thenAbort: number | undefined }
  | { kind: "close"; transfer: number }
  | { kind: "rebind"; transfer: number; dc: number }
  | {
      kind: "configure";
      downloadUnits: number;
      uploadUnits: number;
      small: number;
      large: number;
      interval: number;
    }
  | { kind: "closeRegistry" };

const priority = fc.constantFrom<MediaPriority>("foreground", "background");
const dc = fc.integer({ min: 1, max: 3 });

const open: fc.Arbitrary<Command> = fc.record({
  kind: fc.constant("open" as const),
  dc,
  direction: fc.constantFrom<MediaDirection>("download", "upload"),
  sizeBytes: fc.option(
    fc.integer({ min: 0, max: 40 }).map((n) => n * 1024 * 1024),
    {
      nil: undefined,
    },
  ),
  priority,
});

const command: fc.Arbitrary<Command> = fc.oneof(
  { weight: 2, arbitrary: open },
  {
    weight: 10,
    arbitrary: fc.record({
      kind: fc.constant("acquire" as const),
      transfer: fc.nat(),
      count: fc.integer({ min: 1, max: 3 }),
      units: fc.integer({ min: 1, max: 4 }),
      priority: fc.option(priority, { nil: undefined }),
      abortable: fc.boolean(),
    }),
  },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant("abort" as const), acquire: fc.nat() }) },
  {
    weight: 8,
    arbitrary: fc.record({
      kind: fc.constant("release" as const),
      permit: fc.nat(),
      twice: fc.boolean(),
      // Abort a waiting acquire in the same tick: possibly the one this release just granted.
      thenAbort: fc.option(fc.nat(), { nil: undefined, freq: 3 }),
    }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("close" as const), transfer: fc.nat() }) },
  {
    weight: 2,
    arbitrary: fc.record({ kind: fc.constant("rebind" as const), transfer: fc.nat(), dc }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant("configure" as const),
      downloadUnits: fc.integer({ min: 1, max: 8 }),
      uploadUnits: fc.integer({ min: 1, max: 6 }),
      small: fc.integer({ min: 1, max: 3 }),
      large: fc.integer({ min: 1, max: 2 }),
      interval: fc.integer({ min: 1, max: 4 }),
    }),
  },
);

interface AcquireRecord {
  readonly tracked: Tracked<MediaPermit>;
  readonly controller: AbortController | undefined;
  readonly transfer: MediaTransfer;
  collected: boolean;
}

interface Limits {
  readonly downloadUnits: number;
  readonly uploadUnits: number;
  readonly maxQueuedAcquires: number;
}

const limits: fc.Arbitrary<Limits> = fc.record({
  downloadUnits: fc.integer({ min: 1, max: 6 }),
  uploadUnits: fc.integer({ min: 1, max: 4 }),
  maxQueuedAcquires: fc.integer({ min: 2, max: 10 }),
});

class Model {
  readonly registry: MediaSchedulerRegistry;
  readonly maxQueued: number;
  readonly transfers: MediaTransfer[] = [];
  readonly acquires: AcquireRecord[] = [];
  readonly held: MediaPermit[] = [];
  closing: Tracked<void> | undefined;
  /** Slots in use last seen per scheduler and class, to check they never grow past the cap. */
  readonly slotsSeen = new Map<string, number>();

  constructor(initial: Limits) {
    this.maxQueued = initial.maxQueuedAcquires;
    this.registry = new MediaSchedulerRegistry({
      download: {
        maxBytesInFlight: initial.downloadUnits * UNIT,
        maxActiveSmallTransfers: 2,
        maxActiveLargeTransfers: 1,
      },
      upload: { maxBytesInFlight: initial.uploadUnits * UNIT },
      backgroundGrantInterval: 2,
      maxQueuedAcquires: initial.maxQueuedAcquires,
    });
  }

  async run(step: Command): Promise<void> {
    switch (step.kind) {
      case "open":
        if (this.registry.isClosed) {
          expect(() => this.registry.open(step)).toThrow(
            expect.objectContaining({ code: "ERR_REGISTRY_CLOSED" }),
          );
        } else {
          this.transfers.push(this.registry.open(step));
        }
        break;
      case "acquire": {
        const transfer = this.pick(this.transfers, step.transfer);
        if (transfer === undefined) break;
        const budget = this.registry.limits[transfer.direction].maxBytesInFlight;
        if (step.units * UNIT > budget) {
          expect(() => transfer.acquire(step.units * UNIT)).toThrow(RangeError);
          break;
        }
        for (let i = 0; i < step.count; i++) {
          const controller = step.abortable ? new AbortController() : undefined;
          const acquire = transfer.acquire(step.units * UNIT, {
            priority: step.priority,
            signal: controller?.signal,
          });
          this.acquires.push({ tracked: track(acquire), controller, transfer, collected: false });
        }
        break;
      }
      case "abort":
        this.abortPending(step.acquire);
        break;
      case "release": {
        const index = this.held.length === 0 ? -1 : step.permit % this.held.length;
        const [permit] = index < 0 ? [] : this.held.splice(index, 1);
        permit?.release();
        if (step.twice) permit?.release();
        if (step.thenAbort !== undefined) this.abortPending(step.thenAbort);
        break;
      }
      case "close":
        this.pick(this.transfers, step.transfer)?.close();
        break;
      case "rebind": {
        const transfer = this.pick(this.transfers, step.transfer);
        if (transfer === undefined) break;
        if (transfer.isClosed) {
          expect(() => transfer.rebind(step.dc)).toThrow(
            expect.objectContaining({ code: "ERR_TRANSFER_CLOSED" }),
          );
        } else {
          transfer.rebind(step.dc);
          expect(transfer.dc).toBe(step.dc);
        }
        break;
      }
      case "configure": {
        const limits = {
          download: {
            maxBytesInFlight: step.downloadUnits * UNIT,
            maxActiveSmallTransfers: step.small,
            maxActiveLargeTransfers: step.large,
          },
          upload: { maxBytesInFlight: step.uploadUnits * UNIT },
          backgroundGrantInterval: step.interval,
        };
        if (this.registry.isClosed) {
          expect(() => this.registry.configure(limits)).toThrow(
            expect.objectContaining({ code: "ERR_REGISTRY_CLOSED" }),
          );
        } else {
          this.registry.configure(limits);
        }
        break;
      }
      case "closeRegistry":
        if (this.closing === undefined) this.closing = track(this.registry.close());
        break;
    }
    await tick();
    this.collect();
  }

  /** Takes newly granted permits into `held`. */
  collect(): void {
    for (const record of this.acquires) {
      if (record.collected || record.tracked.status !== "fulfilled") continue;
      record.collected = true;
      this.held.push(record.tracked.value as MediaPermit);
    }
  }

  abortPending(n: number): void {
    const abortable = this.acquires.filter(
      (a) =>
        a.tracked.status === "pending" &&
        a.controller !== undefined &&
        !a.controller.signal.aborted,
    );
    this.pick(abortable, n)?.controller?.abort();
  }

  pick<T>(xs: readonly T[], n: number): T | undefined {
    return xs.length === 0 ? undefined : xs[n % xs.length];
  }

  check(grants: readonly MediaGrantEvent[]): void {
    const snapshot = this.registry.snapshot();
    const pending = this.acquires.filter((a) => a.tracked.status === "pending");
    // Conservation: every scheduler's active bytes are exactly the charges the callers hold.
    for (const scheduler of snapshot.schedulers) {
      const held = this.held.filter(
        (p) => p.dc === scheduler.dc && p.direction === scheduler.direction,
      );
      expect(scheduler.activeBytes).toBe(held.reduce((sum, p) => sum + p.chargedBytes, 0));
      expect(sum(scheduler.transfers, (t) => t.activeBytes)).toBe(scheduler.activeBytes);
      expect(sum(scheduler.transfers, (t) => t.queuedBytes)).toBe(scheduler.queuedBytes);
      expect(sum(scheduler.transfers, (t) => t.queuedRequests)).toBe(scheduler.queuedRequests);
      // No deadlock: with nothing live, nothing can be left waiting.
      if (scheduler.activeBytes === 0) expect(scheduler.queuedRequests).toBe(0);
      this.checkSlots(scheduler);
    }
    for (const permit of this.held) {
      expect(
        snapshot.schedulers.some((s) => s.dc === permit.dc && s.direction === permit.direction),
      ).toBe(true);
    }
    // Every waiting acquire is queued somewhere, and the registry-wide bound holds.
    expect(snapshot.queuedRequests).toBe(pending.length);
    expect(sum(snapshot.schedulers, (s) => s.queuedRequests)).toBe(pending.length);
    expect(pending.length).toBeLessThanOrEqual(this.maxQueued);
    // No waiter outlives its transfer's close.
    for (const record of pending) expect(record.transfer.isClosed).toBe(false);
    // No grant ever took a scheduler past the budget in force.
    for (const grant of grants)
      expect(grant.activeBytes).toBeLessThanOrEqual(grant.maxBytesInFlight);
    for (const transfer of this.transfers) {
      const live = this.held.filter((p) => p.transferId === transfer.id);
      expect(transfer.snapshot().livePermits).toBe(live.length);
    }
  }

  checkSlots(scheduler: MediaSchedulerSnapshot): void {
    for (const sizeClass of ["small", "large"] as const) {
      const inUse = sizeClass === "small" ? scheduler.smallSlotsInUse : scheduler.largeSlotsInUse;
      const cap =
        sizeClass === "small"
          ? scheduler.maxActiveSmallTransfers
          : scheduler.maxActiveLargeTransfers;
      const key = `${scheduler.direction}:${scheduler.dc}:${sizeClass}`;
      // Above a (lowered) cap, the count may only fall.
      expect(inUse <= cap || inUse <= (this.slotsSeen.get(key) ?? 0)).toBe(true);
      this.slotsSeen.set(key, inUse);
      // A transfer waits for a slot only while its class is full.
      const waiting = scheduler.transfers.some(
        (t) => t.sizeClass === sizeClass && t.state === "waiting-for-slot",
      );
      if (waiting) expect(inUse).toBeGreaterThanOrEqual(cap);
    }
  }
}

function sum<T>(xs: readonly T[], f: (x: T) => number): number {
  return xs.reduce((total, x) => total + f(x), 0);
}

describe("random interleavings", () => {
  it("conserve capacity, settle every waiter and leave an empty registry", async () => {
    await fc.assert(
      fc.asyncProperty(
        limits,
        fc.array(open, { minLength: 2, maxLength: 6 }),
        fc.array(command, { minLength: 20, maxLength: 80 }),
        fc.option(fc.array(command, { maxLength: 10 }), { nil: undefined }),
        async (initial, opens, steps, afterRegistryClose) => {
          const commands = [...opens, ...steps];
          const model = new Model(initial);
          const recorder = recordEvents();
          try {
            for (const step of commands) {
              await model.run(step);
              model.check(recorder.events.filter((e): e is MediaGrantEvent => e.type === "grant"));
            }
            // Shut down: close the registry (and keep going a little), or close each transfer;
            // then hand every permit back.
            if (afterRegistryClose === undefined) {
              for (const transfer of model.transfers) transfer.close();
            } else {
              for (const step of [{ kind: "closeRegistry" } as const, ...afterRegistryClose]) {
                await model.run(step);
                model.check(
                  recorder.events.filter((e): e is MediaGrantEvent => e.type === "grant"),
                );
              }
            }
            await tick();
            model.collect();
            for (const permit of model.held.splice(0)) {
              permit.release();
              permit.release();
            }
            await tick();
            expect(model.acquires.every((a) => a.tracked.status !== "pending")).toBe(true);
            expect(model.registry.size).toBe(0);
            if (model.closing !== undefined) expect(model.closing.status).toBe("fulfilled");
            // Every grant's charge came back exactly once.
            const granted = recorder.events
              .filter((e) => e.type === "grant")
              .map((e) => e.permitId);
            const released = recorder.events
              .filter((e) => e.type === "release")
              .map((e) => e.permitId);
            expect([...released].sort((a, b) => a - b)).toEqual([...granted].sort((a, b) => a - b));
            const { counters } = model.registry.snapshot();
            expect(counters.grants).toBe(counters.releases);
            expect(counters.schedulersCreated).toBe(counters.schedulersEvicted);
          } finally {
            recorder.stop();
          }
        },
      ),
      { numRuns: 120 },
    );
  });
});
