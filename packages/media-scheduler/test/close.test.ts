// Closing transfers and the registry: typed rejections, live permits stay charged, a graceful
// drain with a deadline, and no grant in the middle of a registry close.

import { ManualClock } from "@telepace/core";
import { describe, expect, it } from "vitest";
import { MediaSchedulerError, MediaSchedulerRegistry } from "../src/index.js";
import { permitOf, recordEvents, tick, track, UNIT } from "./helpers.js";

/**
 * A budget of two units with one held: a transfer asking for both waits, and one asking for a
 * unit waits behind it.
 */
async function blockedLine() {
  const registry = new MediaSchedulerRegistry({ upload: { maxBytesInFlight: 2 * UNIT } });
  const holder = registry.open({ dc: 1, direction: "upload", sizeBytes: 1 });
  const blocked = registry.open({ dc: 1, direction: "upload", sizeBytes: 1 });
  const behind = registry.open({ dc: 1, direction: "upload", sizeBytes: 1 });
  const held = await holder.acquire(UNIT);
  const big = track(blocked.acquire(2 * UNIT));
  const small = track(behind.acquire(UNIT));
  return { registry, blocked, held, big, small };
}

describe("transfer close", () => {
  it("is idempotent and available through `using`", async () => {
    const registry = new MediaSchedulerRegistry();
    let escaped: ReturnType<typeof registry.open> | undefined;
    {
      using transfer = registry.open({ dc: 1, direction: "upload", sizeBytes: 1 });
      escaped = transfer;
      expect(transfer.isClosed).toBe(false);
    }
    expect(escaped.isClosed).toBe(true);
    escaped.close();
    expect(registry.snapshot().counters).toMatchObject({ transfersOpened: 1, transfersClosed: 1 });
    expect(registry.size).toBe(0);
  });

  it("rejects later acquires asynchronously with ERR_TRANSFER_CLOSED naming the transfer", async () => {
    const registry = new MediaSchedulerRegistry();
    const transfer = registry.open({ dc: 1, direction: "upload", sizeBytes: 1 });
    transfer.close();
    const acquire = transfer.acquire(UNIT);
    await expect(acquire).rejects.toBeInstanceOf(MediaSchedulerError);
    await expect(acquire).rejects.toThrow(
      "Media transfer upload-1 is closed: the media transfer was closed",
    );
  });

  it("lets other transfers through when the closed one was next in line", async () => {
    const { blocked, held, big, small } = await blockedLine();
    await tick();
    expect(small.status).toBe("pending");
    blocked.close();
    await tick();
    expect(big.status).toBe("rejected");
    expect(small.status).toBe("fulfilled");
    held.release();
    permitOf(small).release();
  });
});

describe("registry close", () => {
  it("checks its options whole before closing anything", () => {
    const registry = new MediaSchedulerRegistry();
    expect(() => registry.close({ timeOutMs: 5 } as never)).toThrow(
      new TypeError("Unknown option `timeOutMs` in `options` (did you mean `timeoutMs`?)"),
    );
    expect(() => registry.close({ timeoutMs: -1 })).toThrow(RangeError);
    expect(() => registry.close({ signal: {} as AbortSignal })).toThrow(TypeError);
    expect(registry.isClosed).toBe(false);
  });

  it("resolves at once when nothing is live, and again on every call", async () => {
    const registry = new MediaSchedulerRegistry();
    registry.open({ dc: 1, direction: "download" });
    await registry.close();
    await registry.close();
    await registry[Symbol.asyncDispose]();
    expect(registry.isClosed).toBe(true);
    expect(registry.size).toBe(0);
    expect(registry.snapshot()).toMatchObject({ isClosed: true, openTransfers: 0 });
  });

  it("grants nothing while it closes, even where a rejection frees the line", async () => {
    const { registry, held, big, small } = await blockedLine();
    const recorder = recordEvents();
    const closing = registry.close();
    recorder.stop();
    await tick();
    expect(recorder.events).toEqual([]);
    expect([big.status, small.status]).toEqual(["rejected", "rejected"]);
    held.release();
    await closing;
    expect(registry.snapshot().counters).toMatchObject({
      grants: 1,
      releases: 1,
      rejectedClosed: 2,
    });
  });

  it("waits for live permits, then evicts every scheduler", async () => {
    const registry = new MediaSchedulerRegistry();
    const a = registry.open({ dc: 1, direction: "download", sizeBytes: 1 });
    const b = registry.open({ dc: 2, direction: "upload", sizeBytes: 1 });
    const pa = await a.acquire(UNIT);
    const pb = await b.acquire(UNIT);
    const closing = track(registry.close());
    pa.release();
    await tick();
    expect(closing.status).toBe("pending");
    expect(registry.size).toBe(1);
    pb.release();
    await tick();
    expect(closing.status).toBe("fulfilled");
    expect(registry.size).toBe(0);
  });

  it("gives up after `timeoutMs` by its clock with ERR_CLOSE_TIMEOUT naming the holders", async () => {
    const clock = new ManualClock();
    const registry = new MediaSchedulerRegistry({ clock });
    const transfer = registry.open({ dc: 1, direction: "download", sizeBytes: 1 });
    const held = await transfer.acquire(3 * UNIT);
    const closing = track(registry.close({ timeoutMs: 5_000 }));
    await clock.advance(4_999);
    expect(closing.status).toBe("pending");
    await clock.advance(1);
    expect(closing.status).toBe("rejected");
    expect(closing.reason).toMatchObject({ code: "ERR_CLOSE_TIMEOUT" });
    expect((closing.reason as Error).message).toBe(
      "Media scheduler registry did not drain within 5000 ms: 1 permits (196608 bytes) still live, held by download-1",
    );
    // Still closed, still draining: the permit's release evicts the last scheduler.
    held.release();
    expect(registry.size).toBe(0);
    await registry.close();
  });

  it("cancels its timer when it drains in time", async () => {
    const clock = new ManualClock();
    const registry = new MediaSchedulerRegistry({ clock });
    const transfer = registry.open({ dc: 1, direction: "download", sizeBytes: 1 });
    const held = await transfer.acquire(UNIT);
    const closing = registry.close({ timeoutMs: 1_000 });
    expect(clock.pendingTimers).toBe(1);
    held.release();
    await closing;
    expect(clock.pendingTimers).toBe(0);
  });

  it("stops waiting with the signal's reason when aborted", async () => {
    const registry = new MediaSchedulerRegistry();
    const transfer = registry.open({ dc: 1, direction: "download", sizeBytes: 1 });
    const held = await transfer.acquire(UNIT);
    const controller = new AbortController();
    const closing = registry.close({ signal: controller.signal });
    controller.abort(new Error("shutdown deadline"));
    await expect(closing).rejects.toThrow("shutdown deadline");
    await expect(registry.close({ signal: AbortSignal.abort(new Error("again")) })).rejects.toThrow(
      "again",
    );
    held.release();
    expect(registry.size).toBe(0);
  });

  it("refuses open and configure afterwards, and validates its own options", async () => {
    const registry = new MediaSchedulerRegistry();
    expect(() => registry.close({ timeoutMs: -1 })).toThrow(
      new RangeError("Expected `timeoutMs` to be a finite number >= 0, got -1"),
    );
    await registry.close();
    expect(() => registry.open({ dc: 1, direction: "upload" })).toThrow(
      new MediaSchedulerError("ERR_REGISTRY_CLOSED", "The media scheduler registry is closed"),
    );
    expect(() => registry.configure({ backgroundGrantInterval: 2 })).toThrow(
      expect.objectContaining({ code: "ERR_REGISTRY_CLOSED" }),
    );
  });
});
