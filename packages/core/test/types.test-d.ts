// The public types of the shared vocabulary, checked by the compiler (vitest's typecheck): the
// clock both implementations fit, disposable permits, inferred generics, typed channel names and
// publishers that only take their own events.

import { describe, expectTypeOf, it } from "vitest";
import {
  BinaryHeap,
  type brandErrors,
  type Clock,
  CoreError,
  type CoreErrorCode,
  channelNames,
  createDeferred,
  createPublisher,
  type Logger,
  type ManualClock,
  Semaphore,
  type SemaphorePermit,
  systemClock,
} from "../src/index.js";

describe("core", () => {
  it("has one Clock that the system clock and the manual clock both are", () => {
    expectTypeOf(systemClock).toEqualTypeOf<Clock>();
    expectTypeOf<ManualClock>().toExtend<Clock>();
    expectTypeOf<Clock["sleep"]>().returns.toEqualTypeOf<Promise<void>>();
  });

  it("hands out disposable permits", () => {
    expectTypeOf(new Semaphore(2).acquire()).toEqualTypeOf<Promise<SemaphorePermit>>();
    expectTypeOf<SemaphorePermit>().toExtend<Disposable>();
    const permit = {} as SemaphorePermit;
    // @ts-expect-error a permit's weight is read, never written
    permit.weight = 2;
  });

  it("infers the element and value types of its generics", () => {
    const heap = new BinaryHeap((a: number, b: number) => a - b);
    expectTypeOf(heap.peek()).toEqualTypeOf<number | undefined>();
    expectTypeOf(createDeferred<string>().resolve)
      .parameter(0)
      .toEqualTypeOf<string | PromiseLike<string>>();
  });

  it("types channel names by event type, and a publisher by its events", () => {
    type Event = { readonly type: "a"; readonly n: number } | { readonly type: "b" };
    const names = channelNames("pkg", ["a", "b"] as const);
    expectTypeOf(names).toEqualTypeOf<Readonly<Record<"a" | "b", string>>>();
    const publish = createPublisher<Event>(names);
    publish("a", () => ({ type: "a", n: 1 }));
    // @ts-expect-error the event built must be the one named
    publish("a", () => ({ type: "b" }));
  });

  it("has a pino-compatible logger and a closed set of error codes", () => {
    expectTypeOf<Logger>().toHaveProperty("warn");
    expectTypeOf<CoreError["code"]>().toEqualTypeOf<CoreErrorCode>();
    expectTypeOf({ CoreError }).toExtend<Parameters<typeof brandErrors>[1]>();
  });
});
