// RedisJobRegistry: long work a bot runs detached from the update that started it (a /work job, a
// generation, an export), shared by every process of the bot. Each job's record, owner, progress
// and cancel flag live in Redis: a Cancel press on any process reaches the process running the
// job, and when that process dies its jobs pass, after their lease, to another one, which ends
// them for their users.

import {
  type Clock,
  checkNumber,
  checkOptions,
  describeValue,
  type Logger,
  safeLog,
} from "@telepace/core";
import type { JournalStateValue } from "@telepace/update-dispatch";
import type { Redis } from "ioredis";
import { ScriptConnection } from "./connection.js";
import {
  JOB_ADD_SCRIPT,
  JOB_CANCEL_SCRIPT,
  JOB_REMOVE_SCRIPT,
  JOB_RENEW_SCRIPT,
} from "./job-scripts.js";
import { type LeaseHolderOptions, resolveLeaseHolder } from "./lease-holder.js";
import { checkBotOptions, type RedisBotOptions } from "./namespace.js";

/** Options of {@link RedisJobRegistry}. */
export interface RedisJobRegistryOptions extends RedisBotOptions, LeaseHolderOptions {
  /** Names this process as the owner of its jobs. @defaultValue `"<pid>-<random>"` */
  readonly ownerId?: string | undefined;
  /**
   * How long a job stays this process's without a renewal, in ms: after a crash its jobs pass
   * to another process this long after the last renewal. >= 100. @defaultValue 1500
   */
  readonly leaseMs?: number | undefined;
  /**
   * How often leases are renewed, progress stored and cancel flags read, in ms (a Cancel press
   * elsewhere is heard within this); below `leaseMs`. @defaultValue `leaseMs / 5`
   */
  readonly renewMs?: number | undefined;
}

/** Defaults of {@link RedisJobRegistryOptions}. */
export const redisJobRegistryDefaults = Object.freeze({
  leaseMs: 1_500,
  renewalsPerLease: 5,
});

/** A job of a process that stopped, now this process's to end (see {@link RedisJobRegistry.onOrphan}). */
export interface OrphanedJob {
  readonly id: string;
  readonly record: JournalStateValue;
  /** The last progress its owner stored, if any. */
  readonly progress: number | undefined;
}

/** What {@link RedisJobRegistry.requestCancel} did. */
export type JobCancelAnswer =
  /** The flag is set: the owner hears it at its next renewal. */
  | "requested"
  /** No such job: it ended (or never was). */
  | "not-found"
  /** The job may be cancelled only by whom it was added with (`cancellableBy`). */
  | "not-allowed";

/** A fresh view of a {@link RedisJobRegistry}. */
export interface RedisJobRegistrySnapshot {
  readonly ownerId: string;
  /** Jobs this process holds now. */
  readonly jobs: number;
  readonly renewals: number;
  /** Cancel flags heard for this process's jobs. */
  readonly cancelsHeard: number;
  /** Jobs of stopped processes this process took over. */
  readonly orphansTaken: number;
  /** Jobs of this process another one took over (this one missed its renewals meanwhile). */
  readonly lost: number;
  /** Renewals that failed (Redis unreachable); tried again at the next interval. */
  readonly failures: number;
}

const KNOWN = Object.keys({
  redis: true,
  botId: true,
  prefix: true,
  ownerId: true,
  leaseMs: true,
  renewMs: true,
  clock: true,
  logger: true,
} satisfies Record<keyof RedisJobRegistryOptions, true>);

const JOB_ID = /^[A-Za-z0-9_-]{1,64}$/;
/** Jobs taken over per renewal, so that one renewal stays short. */
const TAKE_PER_RENEWAL = 32;

const LOG = Object.freeze({
  renewFailed: "Renewing the jobs' leases failed; retrying at the next interval",
  lost: "Another process took over a job of this one (its renewals were missed)",
  listenerFailed: "A job registry listener threw; the others still ran",
});

function checkJobId(id: unknown): string {
  if (typeof id !== "string" || !JOB_ID.test(id)) {
    throw new TypeError(
      `Expected a job id of 1 to 64 letters, digits, "_" or "-", got ${describeValue(id)}`,
    );
  }
  return id;
}

/**
 * Jobs shared by every process of a bot: `add` a job when it starts (owned by this process and
 * leased), `setProgress` as it goes, `remove` it when it ended; `run()` renews this process's
 * leases, hears cancel flags (`onCancel`) and takes over jobs of processes that stopped
 * (`onOrphan`: end each for its user, then `remove` it). A job is ended at least once: a process
 * that dies while ending an orphan leaves it to the next.
 *
 * @example
 * const jobs = new RedisJobRegistry({ redis: process.env.REDIS_URL!, botId: botIdOf(token) });
 * jobs.onCancel((id) => running.get(id)?.abort());
 * jobs.onOrphan(async (job) => { await tellUser(job.record); await jobs.remove(job.id); });
 * void jobs.run({ signal });
 */
export class RedisJobRegistry implements AsyncDisposable {
  readonly #connection: ScriptConnection;
  readonly #keys: readonly string[];
  readonly #ownerId: string;
  readonly #leaseMs: number;
  readonly #renewMs: number;
  readonly #clock: Clock;
  readonly #logger: Logger;
  /** This process's jobs and the progress not yet stored. */
  readonly #held = new Map<string, number | undefined>();
  /** Jobs that ended but whose removal has not reached Redis: still renewed, removal retried. */
  readonly #removals = new Set<string>();
  readonly #cancelListeners = new Set<(id: string) => void>();
  readonly #lostListeners = new Set<(id: string) => void>();
  readonly #orphanListeners = new Set<(job: OrphanedJob) => void>();
  readonly #stopper = new AbortController();
  #loop: Promise<void> | undefined;
  #renewals = 0;
  #cancelsHeard = 0;
  #orphansTaken = 0;
  #lost = 0;
  #failures = 0;

  /** @throws {TypeError|RangeError} naming the option, when options are malformed. */
  constructor(options: RedisJobRegistryOptions) {
    if (options === undefined) {
      throw new TypeError(
        "Expected `options` to be an object with `redis` and `botId`, got undefined",
      );
    }
    const given = checkOptions("options", options, KNOWN);
    const { redis, namespace } = checkBotOptions<Redis>(given);
    const ns = `${namespace}:jobs`;
    this.#keys = ["records", "owners", "leases", "cancellable", "progress", "cancels"].map(
      (name) => `${ns}:${name}`,
    );
    const holder = resolveLeaseHolder(given, "ownerId", redisJobRegistryDefaults.leaseMs);
    this.#leaseMs = holder.leaseMs;
    this.#renewMs =
      given.renewMs === undefined
        ? this.#leaseMs / redisJobRegistryDefaults.renewalsPerLease
        : checkNumber("renewMs", given.renewMs, { greaterThan: 0, max: this.#leaseMs - 1 });
    this.#ownerId = holder.id;
    this.#clock = holder.clock;
    this.#logger = holder.logger;
    this.#connection = new ScriptConnection(redis);
  }

  /** The name this process's jobs are owned under. */
  get ownerId(): string {
    return this.#ownerId;
  }

  /**
   * Records a job this process runs (a JSON record, e.g. where its progress message is), leased
   * to it from now. `cancellableBy` names the only one `requestCancel` accepts (a user id).
   */
  add(
    id: string,
    record: JournalStateValue,
    options: { readonly cancellableBy?: string | number | undefined } = {},
  ): Promise<void> {
    checkJobId(id);
    const json = JSON.stringify(record);
    if (json === undefined) throw new TypeError("Expected `record` to be a JSON value");
    const by = options.cancellableBy === undefined ? "" : String(options.cancellableBy);
    const args = [...this.#keys, id, this.#ownerId, Math.ceil(this.#leaseMs), json, by];
    return this.#connection.run(JOB_ADD_SCRIPT, args, "job registry add").then(() => {
      this.#held.set(id, undefined);
    });
  }

  /** The job's progress (any number, e.g. 0–1), stored with the next renewal. */
  setProgress(id: string, progress: number): void {
    if (this.#held.has(id) && Number.isFinite(progress)) this.#held.set(id, progress);
  }

  /**
   * Removes a job that ended (or an orphan that was ended). Resolves `false` when the job was no
   * longer this process's (another one took it over). When Redis cannot be reached it rejects,
   * and the job stays this process's (renewed, so no other process ends it again) while `run`
   * tries the removal again.
   */
  remove(id: string): Promise<boolean> {
    checkJobId(id);
    this.#removals.add(id);
    const args = [...this.#keys, id, this.#ownerId];
    return this.#connection.run(JOB_REMOVE_SCRIPT, args, "job registry remove").then((removed) => {
      this.#removals.delete(id);
      this.#held.delete(id);
      return removed === 1;
    });
  }

  /** Sets a job's cancel flag, from any process; `by` is checked against `cancellableBy`. */
  requestCancel(id: string, by?: string | number): Promise<JobCancelAnswer> {
    checkJobId(id);
    const args = [...this.#keys, id, by === undefined ? "" : String(by)];
    return this.#connection.run(
      JOB_CANCEL_SCRIPT,
      args,
      "job registry cancel",
    ) as Promise<JobCancelAnswer>;
  }

  /** Hears cancel flags set for this process's jobs. Returns the unsubscribe. */
  onCancel(listener: (id: string) => void): () => void {
    return this.#listen(this.#cancelListeners, listener);
  }

  /** Hears of this process's jobs that another process took over (stop them quietly). */
  onLost(listener: (id: string) => void): () => void {
    return this.#listen(this.#lostListeners, listener);
  }

  /** Receives each job of a stopped process that this one took over: end it, then `remove` it. */
  onOrphan(listener: (job: OrphanedJob) => void): () => void {
    return this.#listen(this.#orphanListeners, listener);
  }

  /**
   * Renews at once and then every `renewMs` until aborted or closed: this process's leases and
   * progress, its cancel flags, and the jobs of stopped processes. Resolves when it stops.
   */
  run(options: { readonly signal?: AbortSignal | undefined } = {}): Promise<void> {
    if (this.#loop !== undefined) return this.#loop;
    options.signal?.addEventListener("abort", () => this.#stopper.abort(), { once: true });
    this.#loop = this.#renewLoop();
    return this.#loop;
  }

  /** One renewal now (what `run` does each interval); resolves once it is done. */
  async renew(): Promise<void> {
    const args: (string | number)[] = [
      ...this.#keys,
      this.#ownerId,
      Math.ceil(this.#leaseMs),
      TAKE_PER_RENEWAL,
    ];
    const sent = [...this.#held];
    for (const [id, progress] of sent) args.push(id, progress === undefined ? "" : progress);
    const [cancelled, lost, taken] = (await this.#connection.run(
      JOB_RENEW_SCRIPT,
      args,
      "job registry renewal",
    )) as [string[], string[], string[]];
    this.#renewals++;
    for (const [id, progress] of sent) {
      if (this.#held.get(id) === progress && progress !== undefined) this.#held.set(id, undefined);
    }
    for (const id of cancelled) {
      this.#cancelsHeard++;
      this.#tell(this.#cancelListeners, id);
    }
    for (const id of lost) {
      if (!this.#held.delete(id)) continue;
      this.#lost++;
      safeLog(this.#logger, "warn", { jobId: id }, LOG.lost);
      this.#tell(this.#lostListeners, id);
    }
    for (let i = 0; i + 2 < taken.length; i += 3) {
      const id = taken[i] as string;
      const progressText = taken[i + 2] as string;
      let record: JournalStateValue;
      try {
        record = JSON.parse(taken[i + 1] as string) as JournalStateValue;
      } catch {
        record = null;
      }
      this.#held.set(id, undefined);
      this.#orphansTaken++;
      const progress = progressText === "" ? undefined : Number(progressText);
      this.#tell(this.#orphanListeners, { id, record, progress });
    }
  }

  snapshot(): RedisJobRegistrySnapshot {
    return Object.freeze({
      ownerId: this.#ownerId,
      jobs: this.#held.size,
      renewals: this.#renewals,
      cancelsHeard: this.#cancelsHeard,
      orphansTaken: this.#orphansTaken,
      lost: this.#lost,
      failures: this.#failures,
    });
  }

  /**
   * Stops renewing and quits the client the registry created (a given client is left open).
   * Jobs still held keep their records: `remove` each that ended first; the rest pass to
   * another process after their lease. Idempotent.
   */
  async close(): Promise<void> {
    this.#stopper.abort();
    await this.#loop;
    await this.#connection.close();
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }

  async #renewLoop(): Promise<void> {
    const stop = this.#stopper.signal;
    while (!stop.aborted) {
      try {
        for (const id of [...this.#removals]) await this.remove(id);
        await this.renew();
      } catch (error) {
        if (stop.aborted) break;
        this.#failures++;
        const code = (error as { code?: unknown } | undefined)?.code;
        safeLog(
          this.#logger,
          "error",
          { code: typeof code === "string" ? code : "unknown" },
          LOG.renewFailed,
        );
      }
      await this.#clock.sleep(this.#renewMs, { signal: stop }).catch(() => {});
    }
  }

  #listen<T>(listeners: Set<(value: T) => void>, listener: (value: T) => void): () => void {
    if (typeof listener !== "function") {
      throw new TypeError(`Expected \`listener\` to be a function, got ${describeValue(listener)}`);
    }
    listeners.add(listener);
    return () => {
      listeners.delete(listener);
    };
  }

  #tell<T>(listeners: ReadonlySet<(value: T) => void>, value: T): void {
    for (const listener of listeners) {
      try {
        listener(value);
      } catch {
        safeLog(this.#logger, "error", {}, LOG.listenerFailed);
      }
    }
  }
}
