// The ready queue on its own: whatever order principals are pushed and popped in, each pop takes
// the principal whose head update was enqueued first.

import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { Entry } from "../src/dispatcher/entry.js";
import type { Principal } from "../src/dispatcher/principal-table.js";
import { ReadyQueue } from "../src/dispatcher/ready-queue.js";

function principalWithHead(seq: number): Principal {
  const head = { seq } as Entry;
  return { id: seq, queue: [head], waiters: undefined, run: undefined };
}

describe("ReadyQueue", () => {
  it("pops in head order under any mix of pushes and pops", () => {
    fc.assert(
      fc.property(
        fc.array(fc.oneof(fc.constant("pop" as const), fc.nat({ max: 10_000 })), {
          maxLength: 300,
        }),
        (steps) => {
          const queue = new ReadyQueue();
          const model: number[] = [];
          const used = new Set<number>();
          for (const step of steps) {
            if (step === "pop") {
              model.sort((a, b) => a - b);
              const expected = model.shift();
              expect(queue.pop()?.queue[0]?.seq).toBe(expected);
            } else if (!used.has(step)) {
              // Sequence numbers are unique in the dispatcher.
              used.add(step);
              model.push(step);
              queue.push(principalWithHead(step));
            }
          }
          model.sort((a, b) => a - b);
          for (const expected of model) expect(queue.pop()?.queue[0]?.seq).toBe(expected);
          expect(queue.pop()).toBeUndefined();
        },
      ),
    );
  });

  it("is empty after clear", () => {
    const queue = new ReadyQueue();
    for (const seq of [3, 1, 2]) queue.push(principalWithHead(seq));
    queue.clear();
    expect(queue.pop()).toBeUndefined();
  });
});
