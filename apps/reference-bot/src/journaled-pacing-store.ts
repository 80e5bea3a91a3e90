// The outbox's pacing, kept across a crash. Telegram counts a group's 20 messages a minute per bot
// token, not per process: a bot started again after kill -9 that forgot what the killed process
// sent would burst into groups that had used their minute and earn 429s (a group's retry_after is
// tens of seconds). So each group grant is recorded in the journal's state before it is granted,
// and a new process loads the records of the last window into its memory store.

import type { Clock } from "@telepace/core";
import {
  MemoryPacingStore,
  type PacingDecision,
  type PacingRequest,
  type PacingStore,
} from "@telepace/outbox";
import type { JournalStateValue } from "@telepace/update-dispatch";
import type { Logger } from "pino";
import type { StateJournal } from "./job-store.js";

/** What the journal keeps of one group's window (`pacing:<chat key>`). */
interface WindowRecord {
  readonly chatLimit: number;
  readonly chatWindowMs: number;
  readonly intervalMs: number;
  /** Wall-clock starts (ms since the epoch) inside the window, oldest first. */
  readonly startsAtMs: readonly number[];
}

const RECORD_PREFIX = "pacing:";

function isWindowRecord(value: JournalStateValue): value is JournalStateValue & WindowRecord {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return false;
  const record = value as Record<string, JournalStateValue>;
  return (
    typeof record.chatLimit === "number" &&
    typeof record.chatWindowMs === "number" &&
    typeof record.intervalMs === "number" &&
    Array.isArray(record.startsAtMs) &&
    record.startsAtMs.every((start) => typeof start === "number")
  );
}

/** A {@link PacingStore} whose group windows survive a crash in the journal's state. */
export class JournaledPacingStore implements PacingStore {
  readonly #memory = new MemoryPacingStore();
  readonly #journal: StateJournal;
  readonly #logger: Logger;
  readonly #windows = new Map<string, WindowRecord>();

  private constructor(journal: StateJournal, logger: Logger) {
    this.#journal = journal;
    this.#logger = logger;
  }

  /** A store holding the group windows an earlier process recorded (expired ones are removed). */
  static async restore(
    journal: StateJournal,
    clock: Clock,
    logger: Logger,
  ): Promise<JournaledPacingStore> {
    const store = new JournaledPacingStore(journal, logger);
    const wallNow = Date.now();
    const monoNow = clock.now();
    const starts: { chatKey: string; record: WindowRecord; atMs: number }[] = [];
    for (const [key, value] of await journal.state()) {
      if (!key.startsWith(RECORD_PREFIX)) continue;
      const chatKey = key.slice(RECORD_PREFIX.length);
      const live = isWindowRecord(value)
        ? value.startsAtMs.filter((at) => at > wallNow - value.chatWindowMs)
        : [];
      if (!isWindowRecord(value) || live.length === 0) {
        await journal.deleteState(key);
        continue;
      }
      const record: WindowRecord = {
        chatLimit: value.chatLimit,
        chatWindowMs: value.chatWindowMs,
        intervalMs: value.intervalMs,
        startsAtMs: live,
      };
      store.#windows.set(chatKey, record);
      for (const atMs of live) starts.push({ chatKey, record, atMs });
    }
    // Replayed oldest first on this process's clock, as if this store had granted them.
    starts.sort((a, b) => a.atMs - b.atMs);
    for (const { chatKey, record, atMs } of starts) {
      store.#memory.acquire({
        chatKey,
        intervalMs: record.intervalMs,
        chatLimit: record.chatLimit,
        chatWindowMs: record.chatWindowMs,
        chatReserve: 0,
        paced: true,
        globalLimit: 0,
        globalWindowMs: 0,
        nowMs: monoNow - (wallNow - atMs),
      });
    }
    return store;
  }

  /** Group windows restored or recorded, for logs. */
  get trackedGroups(): number {
    return this.#windows.size;
  }

  async acquire(request: PacingRequest): Promise<PacingDecision> {
    const decision = this.#memory.acquire(request);
    if (!decision.granted || !request.paced || request.chatLimit === 0) return decision;
    if (request.chatKey === undefined) return decision;
    // Synced before the request goes out: a crash after this point cannot hide it.
    const wallNow = Date.now();
    const previous = this.#windows.get(request.chatKey)?.startsAtMs ?? [];
    const record: WindowRecord = {
      chatLimit: request.chatLimit,
      chatWindowMs: request.chatWindowMs,
      intervalMs: request.intervalMs,
      startsAtMs: [...previous.filter((at) => at > wallNow - request.chatWindowMs), wallNow],
    };
    this.#windows.set(request.chatKey, record);
    await this.#journal
      .putState(`${RECORD_PREFIX}${request.chatKey}`, {
        ...record,
        startsAtMs: [...record.startsAtMs],
      })
      .catch((error: unknown) => {
        this.#logger.warn(
          { code: (error as { code?: unknown }).code },
          "could not record a group's pacing; a crash now may cost a 429",
        );
      });
    return decision;
  }

  freeze(chatKey: string | undefined, durationMs: number, nowMs: number): void {
    this.#memory.freeze(chatKey, durationMs, nowMs);
  }
}
