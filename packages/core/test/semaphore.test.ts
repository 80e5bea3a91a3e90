import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { CoreError, Semaphore, type SemaphorePermit } from "../src/index.js";

const tick = () => new Promise<void>((resolve) => setImmediate(resolve));

function record(order: string[], name: string, permit: SemaphorePermit): SemaphorePermit {
  order.push(name);
  return permit;
}

describe("Semaphore", () => {
  it("grants up to capacity at once and queues the rest in FIFO order", async () => {
    const semaphore = new Semaphore(2);
    const a = await semaphore.acquire();
    const b = await semaphore.acquire();
    expect(semaphore.available).toBe(0);
    const order: string[] = [];
    const c = semaphore.acquire().then((p) => record(order, "c", p));
    const d = semaphore.acquire().then((p) => record(order, "d", p));
    expect(semaphore.waiting).toBe(2);
    a.release();
    await tick();
    expect(order).toEqual(["c"]);
    b.release();
    await tick();
    expect(order).toEqual(["c", "d"]);
    (await c).release();
    (await d).release();
    expect(semaphore.available).toBe(2);
  });

  it("serves weighted waiters strictly in order: light ones do not overtake a heavy head", async () => {
    const semaphore = new Semaphore(4);
    const held = await semaphore.acquire(3);
    const order: string[] = [];
    const heavy = semaphore.acquire(4).then((p) => record(order, "heavy", p));
    const light = semaphore.acquire(1).then((p) => record(order, "light", p));
    await tick();
    expect(order).toEqual([]);
    expect(semaphore.tryAcquire(1)).toBeUndefined();
    held.release();
    await tick();
    expect(order).toEqual(["heavy"]);
    (await heavy).release();
    await tick();
    expect(order).toEqual(["heavy", "light"]);
    (await light).release();
  });

  it("releases idempotently and through `using`", async () => {
    const semaphore = new Semaphore(1);
    {
      using permit = await semaphore.acquire();
      expect(permit.weight).toBe(1);
      expect(semaphore.available).toBe(0);
    }
    expect(semaphore.available).toBe(1);
    const permit = semaphore.tryAcquire() as SemaphorePermit;
    permit.release();
    permit.release();
    expect(permit.isReleased).toBe(true);
    expect(semaphore.available).toBe(1);
  });

  it("aborting a waiter removes it, rejects with the reason and unblocks those behind it", async () => {
    const semaphore = new Semaphore(2);
    const held = await semaphore.acquire(1);
    const controller = new AbortController();
    const heavy = semaphore.acquire(2, { signal: controller.signal });
    const light = semaphore.acquire(1);
    const reason = new Error("cancelled");
    controller.abort(reason);
    await expect(heavy).rejects.toBe(reason);
    const permit = await light;
    expect(semaphore.waiting).toBe(0);
    expect(semaphore.available).toBe(0);
    permit.release();
    held.release();
    await expect(semaphore.acquire(1, { signal: controller.signal })).rejects.toBe(reason);
    expect(semaphore.available).toBe(2);
  });

  it("close rejects waiters and later acquires; held permits still release", async () => {
    const semaphore = new Semaphore(1);
    const held = await semaphore.acquire();
    const waiting = semaphore.acquire();
    semaphore.close();
    await expect(waiting).rejects.toMatchObject({ code: "ERR_SEMAPHORE_CLOSED" });
    await expect(semaphore.acquire()).rejects.toBeInstanceOf(CoreError);
    expect(semaphore.tryAcquire()).toBeUndefined();
    held.release();
    expect(semaphore.available).toBe(1);
    expect(semaphore.isClosed).toBe(true);

    const custom = new Semaphore(1);
    const reason = new Error("shutting down");
    custom.close(reason);
    await expect(custom.acquire()).rejects.toBe(reason);
  });

  it("rejects invalid capacity and weights with a RangeError naming them", () => {
    expect(() => new Semaphore(0)).toThrow("Expected `capacity` to be an integer >= 1, got 0");
    expect(() => new Semaphore(1.5)).toThrow(RangeError);
    const semaphore = new Semaphore(3);
    expect(() => semaphore.acquire(0)).toThrow(
      "Expected `weight` to be an integer >= 1 and <= 3, got 0",
    );
    expect(() => semaphore.acquire(-1)).toThrow(RangeError);
    expect(() => semaphore.acquire(1.5)).toThrow(RangeError);
    expect(() => semaphore.acquire(4)).toThrow(/got 4/);
    expect(() => semaphore.tryAcquire(4)).toThrow(RangeError);
  });

  it("property: never over capacity, never loses or duplicates a unit", async () => {
    const op = fc.oneof(
      {
        weight: 5,
        arbitrary: fc.record({
          kind: fc.constant("acquire" as const),
          weight: fc.integer({ min: 1, max: 4 }),
          abortable: fc.boolean(),
        }),
      },
      { weight: 2, arbitrary: fc.record({ kind: fc.constant("abort" as const), index: fc.nat() }) },
      {
        weight: 5,
        arbitrary: fc.record({ kind: fc.constant("release" as const), index: fc.nat() }),
      },
      {
        weight: 2,
        arbitrary: fc.record({
          kind: fc.constant("try" as const),
          weight: fc.integer({ min: 1, max: 4 }),
        }),
      },
      { weight: 1, arbitrary: fc.record({ kind: fc.constant("close" as const) }) },
    );
    await fc.assert(
      fc.asyncProperty(fc.array(op, { maxLength: 60 }), async (ops) => {
        const capacity = 4;
        const semaphore = new Semaphore(capacity);
        const held: SemaphorePermit[] = [];
        const controllers: AbortController[] = [];
        const outcomes: Promise<void>[] = [];
        let settled = 0;
        let issued = 0;
        const check = () => {
          const heldUnits = held.filter((p) => !p.isReleased).reduce((sum, p) => sum + p.weight, 0);
          expect(heldUnits).toBeLessThanOrEqual(capacity);
          expect(semaphore.available).toBe(capacity - heldUnits);
        };
        for (const step of ops) {
          if (step.kind === "acquire") {
            const controller = new AbortController();
            if (step.abortable) controllers.push(controller);
            issued++;
            outcomes.push(
              semaphore.acquire(step.weight, { signal: controller.signal }).then(
                (permit) => {
                  held.push(permit);
                  settled++;
                },
                () => {
                  settled++;
                },
              ),
            );
          } else if (step.kind === "abort" && controllers.length > 0) {
            controllers.splice(step.index % controllers.length, 1)[0]?.abort();
          } else if (step.kind === "release" && held.length > 0) {
            held[step.index % held.length]?.release();
          } else if (step.kind === "try") {
            const permit = semaphore.tryAcquire(step.weight);
            if (permit) held.push(permit);
          } else if (step.kind === "close") {
            semaphore.close();
          }
          await tick();
          check();
        }
        // Release everything: every waiter must then be served (or was rejected).
        while (settled < issued) {
          for (const permit of held) permit.release();
          await tick();
        }
        await Promise.all(outcomes);
        for (const permit of held) permit.release();
        expect(settled).toBe(issued);
        expect(semaphore.waiting).toBe(0);
        expect(semaphore.available).toBe(capacity);
      }),
      { numRuns: 200 },
    );
  });
});
