// The public types of the metrics package, checked by the compiler (vitest's typecheck): every
// component fits its structural source type (the package depends on none of them), options are
// readonly with unknown keys refused, and the handle stops with `using`.

import type { Meter } from "@opentelemetry/api";
import type { MediaSchedulerRegistry } from "@telepace/media-scheduler";
import type { TelegramOutbox } from "@telepace/outbox";
import type { RedisUpdateQueue, SharedUpdateWorker } from "@telepace/redis";
import type { UpdateDispatcher, UpdateIntake } from "@telepace/update-dispatch";
import { describe, expectTypeOf, it } from "vitest";
import {
  type ChatKind,
  instrumentTelepace,
  type MediaRegistrySource,
  type OutboxSource,
  type SharedQueueSource,
  type SharedWorkerSource,
  type TelepaceInstrumentation,
  type TelepaceMetricsOptions,
  type UpdateDispatcherSource,
  type UpdateIntakeSource,
} from "../src/index.js";

declare const meter: Meter;

describe("@telepace/metrics", () => {
  it("takes every component as its source", () => {
    expectTypeOf<TelegramOutbox>().toExtend<OutboxSource>();
    expectTypeOf<UpdateIntake>().toExtend<UpdateIntakeSource>();
    expectTypeOf<UpdateDispatcher>().toExtend<UpdateDispatcherSource>();
    expectTypeOf<MediaSchedulerRegistry>().toExtend<MediaRegistrySource>();
    expectTypeOf<SharedUpdateWorker>().toExtend<SharedWorkerSource>();
    expectTypeOf<RedisUpdateQueue>().toExtend<SharedQueueSource>();
  });

  it("takes readonly options with a required meter, and refuses an unknown key", () => {
    expectTypeOf<TelepaceMetricsOptions["meter"]>().toEqualTypeOf<Meter>();
    // @ts-expect-error the meter is required
    instrumentTelepace({});
    // @ts-expect-error a misspelt option
    instrumentTelepace({ meter, maxPerChatSerie: 1 });
  });

  it("returns a handle to stop, also with using", () => {
    expectTypeOf(instrumentTelepace({ meter })).toEqualTypeOf<TelepaceInstrumentation>();
    expectTypeOf<TelepaceInstrumentation>().toExtend<Disposable>();
    expectTypeOf<ChatKind>().toExtend<string>();
  });
});
