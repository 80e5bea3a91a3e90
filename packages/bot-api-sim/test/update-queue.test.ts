// The update queue against a model of getUpdates' offset rules, under random interleavings of
// new updates, calls with any offset and limit, and webhook confirmations of single updates.

import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { UpdateQueue } from "../src/world/update-queue.js";

type Op =
  | { kind: "push" }
  | { kind: "take"; offset: number; limit: number }
  | { kind: "confirm"; pick: number };

const op: fc.Arbitrary<Op> = fc.oneof(
  fc.constant<Op>({ kind: "push" }),
  // A webhook confirming one pending update, anywhere in the queue.
  fc.record({ pick: fc.nat() }).map((confirm): Op => ({ kind: "confirm", ...confirm })),
  fc
    .record({ offset: fc.integer({ min: -8, max: 30 }), limit: fc.integer({ min: 1, max: 5 }) })
    .map((take): Op => ({ kind: "take", ...take })),
);

describe("UpdateQueue", () => {
  it("behaves like the offset model, also with updates confirmed one by one", () => {
    fc.assert(
      fc.property(fc.array(op, { maxLength: 60 }), (ops) => {
        const first = 10;
        const queue = new UpdateQueue(first, 1000, 1e9);
        let pending: number[] = [];
        let next = first;
        for (const step of ops) {
          if (step.kind === "push") {
            queue.push("message", { message_id: next } as never, 0);
            pending.push(next++);
            continue;
          }
          if (step.kind === "confirm") {
            const items = queue.pendingFrom(0, 0);
            const item = items[step.pick % Math.max(1, items.length)];
            if (item !== undefined) {
              queue.confirm(item);
              pending = pending.filter((id) => id !== item.update.update_id);
            }
            expect(queue.size).toBe(pending.length);
            continue;
          }
          let from = step.offset;
          const head = pending[0] ?? next;
          if (from <= 0) {
            if (from < 0) from += next;
            if (from < head) from = head;
            pending = pending.filter((id) => id >= from);
          } else if (from <= next) {
            pending = pending.filter((id) => id >= from);
          } else {
            from = head;
          }
          const expected = pending.filter((id) => id >= from).slice(0, step.limit);
          const got = queue.take(step.offset, step.limit, 0).map((update) => update.update_id);
          expect(got).toEqual(expected);
          expect(queue.size).toBe(pending.length);
        }
      }),
      { numRuns: 500 },
    );
  });

  it("keeps the bound and never drops silently", () => {
    const queue = new UpdateQueue(1, 3, 1e9);
    for (let i = 0; i < 3; i++) queue.push("message", {} as never, 0);
    expect(() => queue.push("message", {} as never, 0)).toThrow(
      expect.objectContaining({ code: "ERR_UPDATE_QUEUE_FULL" }),
    );
    expect(queue.size).toBe(3);
  });

  it("forgets updates past their retention", () => {
    const queue = new UpdateQueue(1, 10, 1000);
    queue.push("message", {} as never, 0);
    queue.push("message", {} as never, 500);
    expect(queue.pending(1001)).toBe(1);
    expect(queue.take(0, 10, 1001).map((u) => u.update_id)).toEqual([2]);
  });
});
