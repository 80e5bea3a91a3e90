// The /work jobs of a bot run as several processes, in Redis (`RedisJobRegistry`): a Cancel press
// on any process reaches the one running the job, progress is stored as the job goes, and a
// process that dies leaves its jobs to the next one that renews, which ends them for their users.

import type { RedisJobRegistry } from "@telepace/redis";
import type { Logger } from "pino";
import {
  isJobRecord,
  type JobRecord,
  type JobStore,
  type JobStoreHandlers,
  type RemoteCancel,
} from "./job-store.js";

const ANSWERS = {
  requested: "cancelling",
  "not-allowed": "not-owner",
  "not-found": "finished",
} as const satisfies Record<string, RemoteCancel>;

/** Job records shared through the bot's Redis. */
export class SharedJobStore implements JobStore {
  readonly leftoverCause = "process-stopped";
  readonly #registry: RedisJobRegistry;
  readonly #logger: Logger;
  readonly #stop: AbortSignal;

  /** `stop` ends the registry's renewals (the bot's shutdown). */
  constructor(registry: RedisJobRegistry, logger: Logger, stop: AbortSignal) {
    this.#registry = registry;
    this.#logger = logger;
    this.#stop = stop;
  }

  add(id: string, record: JobRecord): Promise<void> {
    return this.#registry.add(id, { ...record }, { cancellableBy: record.ownerId });
  }

  setProgress(id: string, fraction: number): void {
    this.#registry.setProgress(id, fraction);
  }

  async remove(id: string): Promise<void> {
    await this.#registry.remove(id);
  }

  async requestCancel(id: string, byUserId: number): Promise<RemoteCancel> {
    return ANSWERS[await this.#registry.requestCancel(id, byUserId)];
  }

  async watch(handlers: JobStoreHandlers): Promise<number> {
    let found = 0;
    this.#registry.onCancel((id) => handlers.onCancel(id));
    this.#registry.onLost((id) => handlers.onLost(id));
    this.#registry.onOrphan((job) => {
      found++;
      handlers.onLeftover({
        id: job.id,
        record: isJobRecord(job.record) ? job.record : undefined,
        progress: job.progress,
      });
    });
    // The first look is made before the process serves, so what it finds is told apart.
    await this.#registry.renew().catch((error: unknown) => {
      this.#logger.warn(
        { code: (error as { code?: unknown }).code },
        "could not look for jobs a stopped process left; looking again while running",
      );
    });
    const first = found;
    void this.#registry.run({ signal: this.#stop });
    return first;
  }
}
