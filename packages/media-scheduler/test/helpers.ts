// Shared test helpers: units, a macrotask flush, promise tracking, a grant log and the diagnostics
// recorder of this package.

import { type ChannelRecorder, recordChannels } from "@telepace/testing";
import {
  type MediaPermit,
  type MediaSchedulerEvent,
  mediaChargeUnitBytes,
  mediaSchedulerChannels,
} from "../src/index.js";

export const UNIT = mediaChargeUnitBytes;
export const KiB = 1024;
export const MiB = 1024 * 1024;

const realSetImmediate = globalThis.setImmediate;

/** Lets every pending promise continuation run. */
export function tick(): Promise<void> {
  return new Promise((resolve) => realSetImmediate(resolve));
}

/**
 * Lets the scheduler's coalesced grant decision run (it waits one microtask after the change that
 * asked for it), but not the continuations of the callers it grants to.
 */
export function grantTurn(): Promise<void> {
  return Promise.resolve();
}

/** Tracks a promise's settlement without awaiting it. */
export interface Tracked<T> {
  readonly promise: Promise<T>;
  status: "pending" | "fulfilled" | "rejected";
  value: T | undefined;
  reason: unknown;
}

export function track<T>(promise: Promise<T>): Tracked<T> {
  const tracked: Tracked<T> = { promise, status: "pending", value: undefined, reason: undefined };
  promise.then(
    (value) => {
      tracked.status = "fulfilled";
      tracked.value = value;
    },
    (reason: unknown) => {
      tracked.status = "rejected";
      tracked.reason = reason;
    },
  );
  return tracked;
}

/** Grants in the order they were made, and the permits not yet released. */
export class GrantLog {
  readonly grants: MediaPermit[] = [];
  readonly held: MediaPermit[] = [];

  /**
   * @param onRejected - sees each watched acquire that rejects; by default they are expected (a
   * transfer closed at the end of a test).
   */
  constructor(private readonly onRejected: (error: unknown) => void = () => {}) {}

  watch(acquire: Promise<MediaPermit>): void {
    acquire.then((permit) => {
      this.grants.push(permit);
      this.held.push(permit);
    }, this.onRejected);
  }

  /** Releases the held permit at `index` (modulo the number held). */
  release(index: number): void {
    const [permit] = this.held.splice(index % this.held.length, 1);
    permit?.release();
  }

  /** Grants per transfer id among the first `count` grants. */
  countBy(ids: readonly string[], count: number, weigh: (p: MediaPermit) => number): number[] {
    const totals = new Map(ids.map((id) => [id, 0]));
    for (const permit of this.grants.slice(0, count)) {
      totals.set(permit.transferId, (totals.get(permit.transferId) ?? 0) + weigh(permit));
    }
    return ids.map((id) => totals.get(id) ?? 0);
  }
}

/** The permit of a fulfilled tracked acquire (fails the test otherwise). */
export function permitOf(tracked: Tracked<MediaPermit> | undefined): MediaPermit {
  if (tracked?.status !== "fulfilled" || tracked.value === undefined) {
    throw new Error(`expected a granted permit, acquire is ${tracked?.status ?? "missing"}`);
  }
  return tracked.value;
}

/** Records every event published on the package's channels until `stop()`. */
export function recordEvents(): ChannelRecorder<MediaSchedulerEvent> {
  return recordChannels<MediaSchedulerEvent>(mediaSchedulerChannels);
}

/** The single element of `xs` (fails the test when there is not exactly one). */
export function only<T>(xs: readonly T[]): T {
  if (xs.length !== 1) throw new Error(`expected exactly one element, got ${xs.length}`);
  return xs[0] as T;
}
