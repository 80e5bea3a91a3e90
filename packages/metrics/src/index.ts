export { type ChatKind, metricAttributes } from "./attributes.js";
export type { DispatcherSnapshotView, UpdateDispatcherSource } from "./dispatch-metrics.js";
export { instrumentTelepace, type TelepaceInstrumentation } from "./instrument.js";
export type { UpdateIntakeSource } from "./intake-metrics.js";
export type { MediaRegistrySource } from "./media-metrics.js";
export { type TelepaceMetricsOptions, telepaceMetricsDefaults } from "./options.js";
export type { OutboxSnapshotView, OutboxSource } from "./outbox-metrics.js";
export type { SharedQueueSource } from "./shared-queue-metrics.js";
export type { SharedWorkerSource } from "./shared-worker-metrics.js";
