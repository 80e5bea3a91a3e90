// Grant decisions are made once per turn of the event loop: acquires made in the same turn
// compete in the round robin, so the first transfer to ask cannot take the whole idle budget.

import { ManualClock } from "@telepace/core";
import { jainIndex } from "@telepace/testing";
import { describe, expect, it } from "vitest";
import { type MediaPermit, MediaSchedulerRegistry } from "../src/index.js";
import { grantTurn, permitOf, tick, track, UNIT } from "./helpers.js";

describe("coalesced grants", () => {
  it("share an idle budget between transfers that asked in the same turn", async () => {
    const registry = new MediaSchedulerRegistry({
      clock: new ManualClock(),
      download: { maxBytesInFlight: 8 * UNIT, maxActiveSmallTransfers: Number.POSITIVE_INFINITY },
    });
    const transfers = Array.from({ length: 8 }, () =>
      registry.open({ dc: 1, direction: "download", sizeBytes: 1 }),
    );
    // Each transfer asks for 8 chunks at once, one transfer after the other in the same turn.
    const granted: MediaPermit[] = [];
    for (const transfer of transfers) {
      for (let chunk = 0; chunk < 8; chunk++) {
        transfer.acquire(UNIT).then(
          (permit) => granted.push(permit),
          () => undefined, // rejected by the close at the end
        );
      }
    }
    expect(transfers[0]?.snapshot().livePermits).toBe(0); // nothing decided yet
    await tick();
    // One chunk each, not the whole budget to the first transfer.
    expect(granted.map((p) => p.transferId)).toEqual(transfers.map((t) => t.id));
    expect(jainIndex(transfers.map((t) => t.snapshot().grantedBytes))).toBe(1);
    const closing = registry.close();
    for (const permit of granted) permit.release();
    await closing;
  });

  it("decide once for many changes in one turn, and grant in a microtask", async () => {
    const registry = new MediaSchedulerRegistry({ upload: { maxBytesInFlight: 2 * UNIT } });
    const a = registry.open({ dc: 1, direction: "upload", sizeBytes: 1 });
    const b = registry.open({ dc: 1, direction: "upload", sizeBytes: 1 });
    const first = track(a.acquire(UNIT));
    expect(first.status).toBe("pending");
    await grantTurn();
    expect(a.schedulerSnapshot().activeBytes).toBe(UNIT);
    await tick();
    const held = first.value as MediaPermit;
    const waiting = [track(a.acquire(2 * UNIT)), track(b.acquire(UNIT))];
    held.release();
    // The release and both acquires are decided together: `a` just had its turn, so `b` goes
    // first, and `a`'s 2-unit request then waits for `b`'s unit to come back.
    await tick();
    expect(waiting.map((w) => w.status)).toEqual(["pending", "fulfilled"]);
    permitOf(waiting[1]).release();
    await tick();
    expect(waiting[0]?.status).toBe("fulfilled");
    permitOf(waiting[0]).release();
  });
});

describe("hold-and-wait", () => {
  it("waits forever when a transfer holds a permit while waiting behind a larger request", async () => {
    const registry = new MediaSchedulerRegistry({ upload: { maxBytesInFlight: 2 * UNIT } });
    const holder = registry.open({ dc: 1, direction: "upload", sizeBytes: 1 });
    const other = registry.open({ dc: 1, direction: "upload", sizeBytes: 1 });
    const held = await holder.acquire(UNIT);
    const large = track(other.acquire(2 * UNIT)); // next in line, needs `held` back
    await tick();
    const next = track(holder.acquire(UNIT)); // would fit, but may not overtake `large`
    await tick();
    expect([large.status, next.status]).toEqual(["pending", "pending"]);
    // The way out: release first (or ask for both chunks in one acquire).
    held.release();
    await tick();
    expect(large.status).toBe("fulfilled");
    (large.value as MediaPermit).release();
    await tick();
    expect(next.status).toBe("fulfilled");
    (next.value as MediaPermit).release();
    const both = await holder.acquire(2 * UNIT);
    expect(both.chargedBytes).toBe(2 * UNIT);
    both.release();
  });
});
