// The options of instrumentTelepace, their defaults in one frozen object, and their validation:
// checked whole at the call, like every telepace constructor.

import type { Meter } from "@opentelemetry/api";
import {
  type Clock,
  checkClock,
  checkMethods,
  checkOptionalNumber,
  checkOptions,
  systemClock,
} from "@telepace/core";
import type { BroadcastRegistrySource } from "./broadcast-metrics.js";
import type { UpdateDispatcherSource } from "./dispatch-metrics.js";
import type { UpdateIntakeSource } from "./intake-metrics.js";
import type { MediaRegistrySource } from "./media-metrics.js";
import type { OutboxSource } from "./outbox-metrics.js";
import type { SharedQueueSource } from "./shared-queue-metrics.js";
import type { SharedWorkerSource } from "./shared-worker-metrics.js";

/** The defaults of {@link TelepaceMetricsOptions}. */
export const telepaceMetricsDefaults = Object.freeze({
  /** Chats whose outbox queue depth is reported one by one: none, only chat kinds. */
  maxPerChatSeries: 0,
  /** Waiting outbox ops whose enqueue time is kept for `telepace.outbox.queue.wait`. */
  maxTrackedWaits: 10_000,
});

/** What {@link instrumentTelepace} records, and where to. Give at least one component. */
export interface TelepaceMetricsOptions {
  /** The OpenTelemetry `Meter` every instrument is created on (from your SDK's meter provider). */
  readonly meter: Meter;
  /** A `TelegramOutbox` (or a `TelegramClient`'s `client.outbox`). */
  readonly outbox?: OutboxSource | undefined;
  /** An `UpdateIntake`; its dispatcher's gauges are read from its snapshot. */
  readonly intake?: UpdateIntakeSource | undefined;
  /** A standalone `UpdateDispatcher` (not the one inside an intake). */
  readonly dispatcher?: UpdateDispatcherSource | undefined;
  /** A `MediaSchedulerRegistry`. */
  readonly mediaRegistry?: MediaRegistrySource | undefined;
  /** A `SharedUpdateWorker` of `@telepace/redis` (a bot run as several processes). */
  readonly sharedWorker?: SharedWorkerSource | undefined;
  /**
   * The `RedisUpdateQueue` of `@telepace/redis` the processes share: its backlog, read from
   * Redis at each collection (report it from one process, or query the maximum).
   */
  readonly sharedQueue?: SharedQueueSource | undefined;
  /** A `BroadcastRegistry` of `@telepace/broadcast`: its running broadcasts and their events. */
  readonly broadcasts?: BroadcastRegistrySource | undefined;
  /**
   * How many of the busiest outbox chats get a `telepace.chat.id` series of their own on
   * `telepace.outbox.queue.depth`; the others are summed per chat kind as
   * `telepace.chat.id="other"`.
   * Chat ids are unbounded, so every series costs your metrics backend: keep it small. Integer
   * 0–1000; 0 reports chat kinds only.
   * @defaultValue 0
   */
  readonly maxPerChatSeries?: number | undefined;
  /**
   * With an outbox whose `started` events carry no `waitedMs` (`@telepace/outbox` before 0.3):
   * waiting outbox ops whose enqueue time is kept to measure `telepace.outbox.queue.wait`; ops
   * enqueued past it are not measured. Integer >= 0.
   * @defaultValue 10 000 (the outbox's default `maxPending`)
   */
  readonly maxTrackedWaits?: number | undefined;
  /**
   * With an outbox whose `started` events carry no `waitedMs` (before 0.3): the clock outbox
   * queue waits are measured on; share the outbox's. A newer outbox measures them on its own.
   * @defaultValue the system clock
   */
  readonly clock?: Clock | undefined;
}

/** The options with defaults applied. */
export interface ResolvedMetricsOptions {
  readonly meter: Meter;
  readonly outbox: OutboxSource | undefined;
  readonly intake: UpdateIntakeSource | undefined;
  readonly dispatcher: UpdateDispatcherSource | undefined;
  readonly mediaRegistry: MediaRegistrySource | undefined;
  readonly sharedWorker: SharedWorkerSource | undefined;
  readonly sharedQueue: SharedQueueSource | undefined;
  readonly broadcasts: BroadcastRegistrySource | undefined;
  readonly maxPerChatSeries: number;
  readonly maxTrackedWaits: number;
  readonly clock: Clock;
}

const OPTION_KEYS = [
  "meter",
  "outbox",
  "intake",
  "dispatcher",
  "mediaRegistry",
  "sharedWorker",
  "sharedQueue",
  "broadcasts",
  "maxPerChatSeries",
  "maxTrackedWaits",
  "clock",
] as const satisfies readonly (keyof TelepaceMetricsOptions)[];

const METER_METHODS = [
  "createCounter",
  "createHistogram",
  "createObservableCounter",
  "createObservableGauge",
  "addBatchObservableCallback",
  "removeBatchObservableCallback",
];

/**
 * Checks the options whole and applies the defaults.
 * @throws {TypeError | RangeError} naming the option: not an object, an unknown key, no meter,
 *   no component, a component without `snapshot()`, a number out of range.
 */
export function resolveMetricsOptions(options: unknown): ResolvedMetricsOptions {
  if (options === undefined)
    throw new TypeError("Expected `options` to be an object, got undefined");
  const given = checkOptions("options", options, OPTION_KEYS);
  const meter = checkMethods<Meter>("meter", given.meter, METER_METHODS);
  if (meter === undefined) {
    throw new TypeError("Expected `meter` to be an OpenTelemetry Meter, got undefined");
  }
  const source = <T>(name: string): T | undefined =>
    checkMethods<T>(name, given[name], ["snapshot"]);
  const resolved: ResolvedMetricsOptions = {
    meter,
    outbox: source<OutboxSource>("outbox"),
    intake: source<UpdateIntakeSource>("intake"),
    dispatcher: source<UpdateDispatcherSource>("dispatcher"),
    mediaRegistry: source<MediaRegistrySource>("mediaRegistry"),
    sharedWorker: source<SharedWorkerSource>("sharedWorker"),
    sharedQueue: checkMethods<SharedQueueSource>("sharedQueue", given.sharedQueue, ["unfinished"]),
    broadcasts: source<BroadcastRegistrySource>("broadcasts"),
    maxPerChatSeries: checkOptionalNumber(
      "maxPerChatSeries",
      given.maxPerChatSeries,
      telepaceMetricsDefaults.maxPerChatSeries,
      { integer: true, min: 0, max: 1000 },
    ),
    maxTrackedWaits: checkOptionalNumber(
      "maxTrackedWaits",
      given.maxTrackedWaits,
      telepaceMetricsDefaults.maxTrackedWaits,
      { integer: true, min: 0 },
    ),
    clock: checkClock(given.clock, systemClock),
  };
  const { outbox, intake, dispatcher, mediaRegistry, sharedWorker, sharedQueue, broadcasts } =
    resolved;
  const parts = [outbox, intake, dispatcher, mediaRegistry, sharedWorker, sharedQueue, broadcasts];
  if (parts.every((part) => part === undefined)) {
    throw new TypeError(
      "Expected at least one of `outbox`, `intake`, `dispatcher`, `mediaRegistry`, `sharedWorker`, `sharedQueue` or `broadcasts` to instrument",
    );
  }
  return resolved;
}
