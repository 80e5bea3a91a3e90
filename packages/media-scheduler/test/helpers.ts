// Shared test helpers: units, a macrotask flush, and the diagnostics recorder of this package.

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
