// /broadcast <text> for the bot's admins: one message to every known user through a
// BroadcastRegistry (its progress in the bot's journal, so a restart resumes it), with a progress
// message in the admin's chat that shows the counts, the pace and the time left, and ends in a
// final message with every outcome.

import type { Message } from "@grammyjs/types";
import {
  type Broadcast,
  BroadcastRegistry,
  type BroadcastReport,
  type BroadcastSnapshot,
  JournalBroadcastStore,
} from "@telepace/broadcast";
import type { TelegramClient } from "@telepace/client";
import { type Clock, systemClock, type Timer } from "@telepace/core";
import type { Logger } from "pino";
import type { StateJournal } from "./job-store.js";
import type { KnownUsers } from "./known-users.js";
import type { Messenger } from "./messenger.js";

/** Options of {@link AdminBroadcasts}. */
export interface AdminBroadcastsOptions {
  readonly client: TelegramClient;
  readonly messenger: Messenger;
  /** Where broadcasts and their progress messages are recorded (the bot's journal). */
  readonly journal: StateJournal;
  readonly knownUsers: KnownUsers;
  /** User ids allowed to /broadcast. */
  readonly admins: readonly number[];
  /** Free sends per second (30, Telegram's limit; the demo slows it to span its crash). */
  readonly perSecond: number;
  readonly clock?: Clock | undefined;
  readonly logger: Logger;
}

/** What a broadcast's record in the journal holds: enough to resume it and its progress message. */
interface BroadcastJob {
  readonly text: string;
  readonly chatId: number;
  readonly progressId: number;
  /** The known users when it started: the broadcast reaches these. */
  readonly total: number;
}

const RECORD_PREFIX = "admin-broadcast:";
/** How often the progress message is refreshed (its edits coalesce in the outbox). */
const PROGRESS_EVERY_MS = 2_000;

function isJob(value: unknown): value is BroadcastJob {
  const job = value as Partial<BroadcastJob> | null;
  return (
    typeof job === "object" &&
    job !== null &&
    typeof job.text === "string" &&
    typeof job.chatId === "number" &&
    typeof job.progressId === "number" &&
    typeof job.total === "number"
  );
}

/** "12 sent, 1 blocked, 2 not found" — the outcomes that happened, in a fixed order. */
export function describeCounts(counts: BroadcastSnapshot["counts"]): string {
  const parts: [number, string][] = [
    [counts.sent, "sent"],
    [counts.blocked, "blocked the bot"],
    [counts.deactivated, "deleted their account"],
    [counts.forbidden, "cannot be written to"],
    [counts.chatNotFound, "not found"],
    [counts.maybeDelivered, "maybe delivered"],
    [counts.failed, "failed"],
  ];
  const said = parts.filter(([count]) => count > 0).map(([count, what]) => `${count} ${what}`);
  return said.length === 0 ? "nothing yet" : said.join(", ");
}

function progressText(snapshot: BroadcastSnapshot, total: number): string {
  const eta =
    snapshot.etaMs === undefined ? "" : `, about ${Math.ceil(snapshot.etaMs / 1000)} s left`;
  const state = snapshot.state === "paused" ? " (paused)" : "";
  return `Broadcast${state}: ${snapshot.settled}/${total} — ${describeCounts(snapshot.counts)}; ${snapshot.ratePerSecond.toFixed(1)}/s${eta}`;
}

function finalText(report: BroadcastReport, total: number): string {
  const again =
    report.counts.resentAfterCrash === 0
      ? ""
      : `; ${report.counts.resentAfterCrash} sent again after a crash (they may have it twice)`;
  const how = report.status === "completed" ? "done" : report.status;
  return `Broadcast ${how}: ${total} people — ${describeCounts(report.counts)}${again}.`;
}

/** Runs the admins' broadcasts and resumes the ones a restart found in the journal. */
export class AdminBroadcasts {
  readonly #options: AdminBroadcastsOptions;
  readonly #registry: BroadcastRegistry;
  readonly #admins: ReadonlySet<number>;
  readonly #running = new Set<Promise<void>>();
  readonly #clock: Clock;

  constructor(options: AdminBroadcastsOptions) {
    this.#options = options;
    this.#admins = new Set(options.admins);
    this.#clock = options.clock ?? systemClock;
    this.#registry = new BroadcastRegistry({
      client: options.client,
      store: new JournalBroadcastStore(options.journal),
      clock: this.#clock,
      logger: options.logger,
    });
  }

  /** Whether `userId` may /broadcast. */
  isAdmin(userId: number): boolean {
    return this.#admins.has(userId);
  }

  /** /broadcast <text> from `message`: refused for non-admins, else started with a progress message. */
  async handle(message: Message, text: string): Promise<void> {
    const { messenger, knownUsers, journal } = this.#options;
    const from = message.from;
    const reply = { replyToMessageId: message.message_id };
    if (from === undefined || !this.isAdmin(from.id)) {
      await messenger.sendText(message.chat.id, "Only the bot's admins can /broadcast.", reply);
      return;
    }
    if (text === "") {
      await messenger.sendText(message.chat.id, "Usage: /broadcast <text>", reply);
      return;
    }
    const id = `${message.chat.id}-${message.message_id}`;
    // This update ran before (a crash came after the broadcast was recorded): it is running, or
    // will be resumed, with its own progress message.
    if ((await journal.state()).has(`${RECORD_PREFIX}${id}`)) return;
    const total = knownUsers.count;
    const progress = await messenger.sendText(
      message.chat.id,
      `Broadcast: 0/${total} — starting`,
      reply,
    );
    if (progress === undefined) return;
    const job: BroadcastJob = {
      text,
      chatId: message.chat.id,
      progressId: progress.message_id,
      total,
    };
    // Recorded before it starts: a crash from here on resumes it (the update may run again too;
    // the same id then finds the same broadcast, never a second one).
    await journal.putState(`${RECORD_PREFIX}${id}`, { ...job });
    this.#run(id, job);
  }

  /** Resumes every broadcast an earlier process left running; resolves with how many. */
  async recover(): Promise<number> {
    let resumed = 0;
    for (const [key, value] of await this.#options.journal.state()) {
      if (!key.startsWith(RECORD_PREFIX) || !isJob(value)) continue;
      const id = key.slice(RECORD_PREFIX.length);
      if (this.#registry.get(id) !== undefined) continue;
      this.#run(id, value);
      resumed++;
    }
    return resumed;
  }

  /** Broadcasts running now. */
  get running(): number {
    return this.#running.size;
  }

  /** Interrupts the running broadcasts (a restart resumes them) and waits for their sends. */
  async close(): Promise<void> {
    await this.#registry.close({ timeoutMs: 10_000 });
    await Promise.all(this.#running);
  }

  #run(id: string, job: BroadcastJob): void {
    const { knownUsers, messenger, journal, logger, perSecond } = this.#options;
    let broadcast: Broadcast;
    try {
      broadcast = this.#registry.start(id, {
        message: { method: "sendMessage", params: { text: job.text } },
        recipients: knownUsers.cursor(job.total),
        total: job.total,
        maxPerSecond: perSecond,
      });
    } catch (error) {
      logger.error(
        { broadcast: id, code: (error as { code?: unknown }).code },
        "broadcast refused",
      );
      return;
    }
    const running = (async () => {
      let timer: Timer | undefined;
      const tick = (): void => {
        const text = progressText(broadcast.snapshot(), job.total);
        void messenger.editText(job.chatId, job.progressId, text);
        timer = this.#clock.setTimer(tick, PROGRESS_EVERY_MS);
      };
      timer = this.#clock.setTimer(tick, PROGRESS_EVERY_MS);
      const report = await broadcast.result;
      timer.cancel();
      if (report.status === "interrupted") return; // the next process resumes it
      const final = await messenger.sendText(job.chatId, finalText(report, job.total), {
        replaceMessageId: job.progressId,
      });
      logger.info(
        { broadcast: id, status: report.status, counts: report.counts },
        "broadcast ended",
      );
      if (final !== undefined || !messenger.isReachable(job.chatId)) {
        await journal.deleteState(`${RECORD_PREFIX}${id}`);
      }
    })();
    this.#running.add(running);
    void running.finally(() => this.#running.delete(running));
  }
}
