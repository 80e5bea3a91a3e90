// Where running /work jobs are recorded, so that a process that dies leaves them behind for
// another to end: the journal's application state for one process (read at start), or the bot's
// Redis when it runs as several processes (taken over by a survivor after the lease, and the
// only way a Cancel press reaches a job running in another process).

import type { JournalStateValue, UpdateJournal } from "@telepace/update-dispatch";

/** The part of a journal that keeps the bot's own records (jobs, broadcasts, pacing windows). */
export type StateJournal = Pick<UpdateJournal, "putState" | "deleteState" | "state">;

/** What is kept of a running job, enough to end it after a crash. */
export interface JobRecord {
  readonly chatId: number;
  /** The chat the progress message is in (a migrated group's supergroup, if it had moved). */
  readonly progressChatId: number;
  readonly progressMessageId: number;
  readonly ownerId: number;
  readonly ownerName: string;
  readonly seconds: number;
  /** Wall-clock start, ISO 8601, for people reading the journal. */
  readonly startedAt: string;
}

/** A job a stopped process left: its record (when readable) and how far it had come. */
export interface LeftoverJob {
  readonly id: string;
  readonly record: JobRecord | undefined;
  /** 0–1, when the store keeps progress. */
  readonly progress: number | undefined;
}

/** What a Cancel press for a job not running in this process comes to. */
export type RemoteCancel = "cancelling" | "not-owner" | "finished";

/** What a {@link JobStore} tells the jobs of this process. */
export interface JobStoreHandlers {
  /** A job a stopped process left: end it for its user, then `remove` it. */
  onLeftover(job: LeftoverJob): void;
  /** Its user pressed Cancel on another process. */
  onCancel(id: string): void;
  /** Another process took the job over (this one missed its renewals): stop it without a word. */
  onLost(id: string): void;
}

/** The records of running jobs. */
export interface JobStore {
  /** How a leftover came about, for its user: a restart, or a process of several stopping. */
  readonly leftoverCause: "restart" | "process-stopped";
  /** Records a job of this process once its progress message is out. */
  add(id: string, record: JobRecord): Promise<void>;
  /** How far it has come (0–1); a store may keep only the latest. */
  setProgress(id: string, fraction: number): void;
  /** Drops the record of a job that ended. */
  remove(id: string): Promise<void>;
  /** A Cancel press for a job this process does not run. */
  requestCancel(id: string, byUserId: number): Promise<RemoteCancel>;
  /**
   * Starts telling `handlers`; resolves with how many leftovers the first look found (they are
   * handed over before it resolves).
   */
  watch(handlers: JobStoreHandlers): Promise<number>;
}

const RECORD_PREFIX = "job:";

/** Whether a stored value is a job record. */
export function isJobRecord(value: JournalStateValue): value is JournalStateValue & JobRecord {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return false;
  const record = value as Record<string, JournalStateValue>;
  return (
    typeof record.chatId === "number" &&
    typeof record.progressChatId === "number" &&
    typeof record.progressMessageId === "number" &&
    typeof record.ownerName === "string" &&
    typeof record.seconds === "number"
  );
}

/**
 * Job records in a journal's application state (`job:<id>`), for a bot that is one process per
 * journal: every record found at start was left by the process before, and a job this process
 * does not run has finished.
 */
export class JournalJobStore implements JobStore {
  readonly leftoverCause = "restart";
  readonly #journal: StateJournal;

  constructor(journal: StateJournal) {
    this.#journal = journal;
  }

  add(id: string, record: JobRecord): Promise<void> {
    return this.#journal.putState(`${RECORD_PREFIX}${id}`, { ...record });
  }

  setProgress(): void {}

  remove(id: string): Promise<void> {
    return this.#journal.deleteState(`${RECORD_PREFIX}${id}`);
  }

  async requestCancel(): Promise<RemoteCancel> {
    return "finished";
  }

  async watch(handlers: JobStoreHandlers): Promise<number> {
    const leftovers = [...(await this.#journal.state())].filter(([key]) =>
      key.startsWith(RECORD_PREFIX),
    );
    for (const [key, value] of leftovers) {
      handlers.onLeftover({
        id: key.slice(RECORD_PREFIX.length),
        record: isJobRecord(value) ? value : undefined,
        progress: undefined,
      });
    }
    return leftovers.length;
  }
}
