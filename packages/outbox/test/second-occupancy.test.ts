import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { SecondOccupancy } from "../src/second-occupancy.js";

describe("SecondOccupancy", () => {
  it("counts a request from its start until a second after its answer", () => {
    const occupancy = new SecondOccupancy<string>(1_000);
    occupancy.started("a", 0);
    occupancy.started("b", 10);
    expect(occupancy.count(10)).toBe(2);
    // Both in flight: only an answer frees a place.
    expect(occupancy.roomAt(10, 2)).toBe(Number.POSITIVE_INFINITY);
    expect(occupancy.ended("a", 40)).toBe(true);
    expect(occupancy.ended("a", 41)).toBe(false);
    expect(occupancy.roomAt(50, 2)).toBe(1_040);
    expect(occupancy.roomAt(50, 3)).toBe(50);
    expect(occupancy.oldest(50)).toEqual({ startedAt: 0, leavesAt: 1_040 });
    expect(occupancy.count(1_039)).toBe(2);
    expect(occupancy.count(1_040)).toBe(1);
    // b, still in flight, is now the earliest start counted.
    expect(occupancy.oldest(1_040)).toEqual({
      startedAt: 10,
      leavesAt: Number.POSITIVE_INFINITY,
    });
  });

  it("agrees with counting by hand, whatever the order of answers", () => {
    const request = fc.record({
      startedAt: fc.integer({ min: 0, max: 5_000 }),
      tookMs: fc.integer({ min: 0, max: 2_000 }),
    });
    fc.assert(
      fc.property(
        fc.array(request, { maxLength: 200 }),
        fc.integer({ min: 1, max: 5 }),
        (requests, limit) => {
          const occupancy = new SecondOccupancy<number>(1_000);
          type Event = { at: number; kind: "start" | "end"; id: number };
          const events: Event[] = requests.flatMap((r, id) => [
            { at: r.startedAt, kind: "start" as const, id },
            { at: r.startedAt + r.tookMs, kind: "end" as const, id },
          ]);
          events.sort((x, y) => x.at - y.at || (x.kind === "start" ? -1 : 1));
          const seen: Event[] = [];
          for (const event of events) {
            if (event.kind === "start") occupancy.started(event.id, event.at);
            else occupancy.ended(event.id, event.at);
            seen.push(event);
            const now = event.at;
            const counted = requests.filter((r, id) => {
              const started = seen.some((e) => e.id === id && e.kind === "start");
              const ended = seen.some((e) => e.id === id && e.kind === "end");
              return started && (!ended || r.startedAt + r.tookMs > now - 1_000);
            });
            expect(occupancy.count(now)).toBe(counted.length);
            const earliest = Math.min(...counted.map((r) => r.startedAt));
            expect(occupancy.oldest(now).startedAt).toBe(earliest);
            const roomAt = occupancy.roomAt(now, limit);
            if (counted.length < limit) expect(roomAt).toBe(now);
            else expect(roomAt).toBeGreaterThan(now);
          }
        },
      ),
      { numRuns: 60 },
    );
  });
});
