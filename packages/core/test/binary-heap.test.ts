import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { BinaryHeap } from "../src/index.js";

describe("BinaryHeap", () => {
  it("pops in comparator order and reports size and peek", () => {
    const heap = new BinaryHeap<number>((a, b) => a - b);
    for (const n of [5, 1, 4, 1, 3]) heap.push(n);
    expect(heap.size).toBe(5);
    expect(heap.peek()).toBe(1);
    expect([heap.pop(), heap.pop(), heap.pop(), heap.pop(), heap.pop(), heap.pop()]).toEqual([
      1,
      1,
      3,
      4,
      5,
      undefined,
    ]);
  });

  it("removes an arbitrary element and keeps the order", () => {
    const heap = new BinaryHeap<{ v: number }>((a, b) => a.v - b.v);
    const items = [7, 2, 9, 4, 1].map((v) => ({ v }));
    for (const item of items) heap.push(item);
    expect(heap.remove(items[3] as { v: number })).toBe(true);
    expect(heap.remove({ v: 4 })).toBe(false);
    const out: number[] = [];
    while (heap.size > 0) out.push((heap.pop() as { v: number }).v);
    expect(out).toEqual([1, 2, 7, 9]);
  });

  it("rejects a missing comparator", () => {
    expect(() => new BinaryHeap(undefined as never)).toThrow(/`compare`/);
  });

  it("property: any mix of push, pop and remove pops in sorted order", () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.oneof(
            fc.record({
              op: fc.constant("push" as const),
              value: fc.integer({ min: -100, max: 100 }),
            }),
            fc.record({ op: fc.constant("pop" as const) }),
            fc.record({ op: fc.constant("remove" as const), index: fc.nat() }),
          ),
        ),
        (ops) => {
          const heap = new BinaryHeap<{ value: number }>((a, b) => a.value - b.value);
          const model: { value: number }[] = [];
          for (const op of ops) {
            if (op.op === "push") {
              const item = { value: op.value };
              heap.push(item);
              model.push(item);
            } else if (op.op === "pop") {
              model.sort((a, b) => a.value - b.value);
              const expected = model.shift();
              expect(heap.pop()?.value).toBe(expected?.value);
            } else if (model.length > 0) {
              const [item] = model.splice(op.index % model.length, 1);
              expect(heap.remove(item as { value: number })).toBe(true);
            }
            expect(heap.size).toBe(model.length);
          }
          const rest: number[] = [];
          while (heap.size > 0) rest.push((heap.pop() as { value: number }).value);
          expect(rest).toEqual(model.map((m) => m.value).sort((a, b) => a - b));
        },
      ),
    );
  });
});
