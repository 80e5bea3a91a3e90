// Long jobs (/work): each streams progress edits into one message and ends with a replace-progress
// final message. Jobs run detached from the update that started them, so the user's key in the
// dispatcher keeps moving and a Cancel press is handled while the job runs. Every running job is
// recorded in a JobStore (the journal, or Redis shared by several processes), so a process that
// dies leaves a record behind and another one tells the job's user that it was interrupted; with
// Redis a Cancel press on any process reaches the process running the job.

import { randomBytes } from "node:crypto";
import type { InlineKeyboardMarkup } from "@grammyjs/types";
import { type Clock, createDeferred } from "@telepace/core";
import type { Logger } from "pino";
import type { BotEventSink, JobEnd, ProgressEditOutcome } from "./bot-events.js";
import type { JobRecord, JobStore, LeftoverJob } from "./job-store.js";
import type { Messenger } from "./messenger.js";

interface Job {
  readonly id: string;
  readonly chatId: number;
  readonly ownerId: number;
  readonly ownerName: string;
  readonly controller: AbortController;
  /** Who stopped it early: its user, the shutdown, or another process that took it over. */
  cancelledBy: "user" | "shutdown" | "taken-over" | undefined;
  readonly finished: Promise<JobEnd | "taken-over">;
}

/** Options of {@link WorkJobs}. */
export interface WorkJobsOptions {
  readonly clock: Clock;
  readonly logger: Logger;
  readonly store: JobStore;
  readonly onEvent: BotEventSink;
  /** Progress updates per second each job asks for (the outbox coalesces what it cannot send). */
  readonly progressHz: number;
  /** Jobs running at once; beyond it /work is refused with a message. */
  readonly maxJobs: number;
}

/** Counters for logs and the demo report. */
export interface WorkJobCounters {
  started: number;
  refused: number;
  progressRequested: number;
  ended: Record<JobEnd, number>;
  /** Jobs an earlier process left running, ended at start with a message to their users. */
  recovered: number;
}

const CANCEL_PREFIX = "cancel:";
// Random ids: a Cancel button left by an earlier process can never name a job of this one.
const JOB_ID = /^[A-Za-z0-9_-]{8}$/;

function bar(fraction: number): string {
  const filled = Math.round(fraction * 10);
  return `${"▓".repeat(filled)}${"░".repeat(10 - filled)}`;
}

/** Whether an edit left the message showing its text. */
function isShown(outcome: ProgressEditOutcome): boolean {
  return outcome === "sent" || outcome === "unchanged";
}

/** The running /work jobs of the bot. */
export class WorkJobs {
  readonly #messenger: Messenger;
  readonly #options: WorkJobsOptions;
  readonly #jobs = new Map<string, Job>();
  /** Endings of leftover jobs under way (or done), for `interruptAll` to wait for. */
  readonly #recovering = new Set<Promise<void>>();
  readonly counters: WorkJobCounters = {
    started: 0,
    refused: 0,
    progressRequested: 0,
    ended: { done: 0, cancelled: 0, interrupted: 0, undeliverable: 0 },
    recovered: 0,
  };

  constructor(messenger: Messenger, options: WorkJobsOptions) {
    this.#messenger = messenger;
    this.#options = options;
  }

  get running(): number {
    return this.#jobs.size;
  }

  /** The callback data of a job's Cancel button, or undefined when `data` is not one. */
  static parseCancel(data: string | undefined): string | undefined {
    if (data === undefined || !data.startsWith(CANCEL_PREFIX)) return undefined;
    const id = data.slice(CANCEL_PREFIX.length);
    return JOB_ID.test(id) ? id : undefined;
  }

  /**
   * Watches the job store: each record a stopped process left (found now, or later while this
   * process runs with a shared store) is ended in the background with a message to its user —
   * the progress message is replaced by an "interrupted" final, then the record is removed —
   * and Cancel presses made on other processes reach this one's jobs. Resolves with how many
   * leftovers the first look found; `interruptAll` waits for their messages.
   */
  recover(): Promise<number> {
    return this.#options.store.watch({
      onLeftover: (job) => {
        const ending: Promise<void> = this.#endLeftover(job).finally(() =>
          this.#recovering.delete(ending),
        );
        this.#recovering.add(ending);
      },
      onCancel: (id) => {
        const job = this.#jobs.get(id);
        if (job !== undefined && job.cancelledBy === undefined) {
          job.cancelledBy = "user";
          job.controller.abort();
        }
      },
      onLost: (id) => {
        const job = this.#jobs.get(id);
        if (job === undefined) return;
        this.#options.logger.warn({ jobId: id }, "another process took over a job of this one");
        job.cancelledBy = "taken-over";
        job.controller.abort();
      },
    });
  }

  async #endLeftover(job: LeftoverJob): Promise<void> {
    const { id: jobId, record } = job;
    let isDelivered = false;
    if (record !== undefined) {
      const final = await this.#messenger.sendText(
        record.progressChatId,
        this.#leftoverText(record, job.progress),
        { replaceMessageId: record.progressMessageId },
      );
      isDelivered = final !== undefined;
    } else {
      this.#options.logger.warn({ jobId }, "unreadable job record dropped");
    }
    this.counters.recovered++;
    await this.#forget(jobId);
    this.#options.onEvent({ type: "job-recovered", jobId, isDelivered });
  }

  #leftoverText(record: JobRecord, progress: number | undefined): string {
    const { ownerName: name, seconds } = record;
    const again = `Send /work ${seconds} to run it again.`;
    if (this.#options.store.leftoverCause === "restart") {
      return `Interrupted, ${name}: the bot restarted before your ${seconds} s job finished. ${again}`;
    }
    const at = progress === undefined ? "" : ` at ${Math.floor(progress * 100)}%`;
    return `Interrupted, ${name}: the bot process running your ${seconds} s job stopped${at}. ${again}`;
  }

  /** Removes a job's record; a store that fails here only means a repeated ending later. */
  async #forget(jobId: string): Promise<void> {
    await this.#options.store.remove(jobId).catch((error: unknown) => {
      this.#options.logger.warn(
        { jobId, code: (error as { code?: unknown }).code },
        "could not remove a job record",
      );
    });
  }

  /**
   * Starts a job of `seconds` in `chatId` for `ownerId`. Resolves once the progress message is
   * out (or the job was refused); the job itself runs on.
   */
  async start(
    chatId: number,
    owner: { readonly id: number; readonly first_name: string },
    seconds: number,
    replyTo: number,
  ): Promise<void> {
    if (this.#jobs.size >= this.#options.maxJobs) {
      this.counters.refused++;
      await this.#messenger.sendText(
        chatId,
        "Too many jobs are running right now; try again in a moment.",
        {
          replyToMessageId: replyTo,
        },
      );
      return;
    }
    const id = randomBytes(6).toString("base64url");
    const keyboard: InlineKeyboardMarkup = {
      inline_keyboard: [[{ text: "Cancel", callback_data: `${CANCEL_PREFIX}${id}` }]],
    };
    const progress = await this.#messenger.sendText(chatId, `Working… 0% ${bar(0)}`, {
      replyMarkup: keyboard,
      replyToMessageId: replyTo,
    });
    if (progress === undefined) {
      // Not started: say so rather than leave the user waiting for a job that never runs. (A 5xx
      // may have delivered the progress message after all; its Cancel then answers "finished".)
      this.counters.refused++;
      await this.#messenger.sendText(
        chatId,
        "I could not start that job; please send /work again.",
        {
          replyToMessageId: replyTo,
        },
      );
      return;
    }
    // Recorded before the update that started it finishes: a crash from here on leaves the
    // record, and the next process ends the job with a message.
    const record: JobRecord = {
      chatId,
      progressChatId: this.#messenger.resolve(chatId),
      progressMessageId: progress.message_id,
      ownerId: owner.id,
      ownerName: owner.first_name,
      seconds,
      startedAt: new Date().toISOString(),
    };
    await this.#options.store.add(id, record).catch((error: unknown) => {
      this.#options.logger.error(
        { jobId: id, code: (error as { code?: unknown }).code },
        "could not record a job; a crash would leave it unreported",
      );
    });
    this.counters.started++;
    this.#options.onEvent({ type: "job-started", jobId: id, chatId });
    const controller = new AbortController();
    const finished = createDeferred<JobEnd | "taken-over">();
    const job: Job = {
      id,
      chatId,
      ownerId: owner.id,
      ownerName: owner.first_name,
      controller,
      cancelledBy: undefined,
      finished: finished.promise,
    };
    this.#jobs.set(id, job);
    void this.#run(job, progress.message_id, seconds, keyboard)
      .catch((error: unknown) => {
        this.#options.logger.error({ jobId: id, err: error }, "job crashed");
        return "undeliverable" as const;
      })
      .then(async (end) => {
        // Another process took the job over and ends it: its record is not this one's any more.
        if (end === "taken-over") {
          this.#jobs.delete(id);
          finished.resolve(end);
          return;
        }
        // Told before the record goes: a kill between the two leaves the record, and the next
        // process ends the job again, so no kill can leave an ended job unreported.
        this.counters.ended[end]++;
        this.#options.onEvent({ type: "job-ended", jobId: id, end });
        await this.#forget(id);
        this.#jobs.delete(id);
        finished.resolve(end);
      });
  }

  /**
   * A Cancel press: only the job's owner may cancel it. A job running in another process (with a
   * shared store) is cancelled there. Resolves the text to answer with.
   */
  async cancel(jobId: string, byUserId: number): Promise<string> {
    const job = this.#jobs.get(jobId);
    const answer =
      job === undefined
        ? await this.#options.store.requestCancel(jobId, byUserId).catch((error: unknown) => {
            this.#options.logger.warn(
              { jobId, code: (error as { code?: unknown }).code },
              "could not pass a Cancel press on to the job's process",
            );
            return "unknown" as const;
          })
        : job.ownerId !== byUserId
          ? "not-owner"
          : "cancelling";
    this.#options.onEvent({
      type: "job-cancel-asked",
      jobId,
      isElsewhere: job === undefined,
      isHonoured: answer === "cancelling",
    });
    if (answer === "unknown")
      return "I could not reach that job just now; please press Cancel again.";
    if (answer === "finished") return "That job has already finished.";
    if (answer === "not-owner") return "Only the person who started this job can cancel it.";
    if (job !== undefined && job.cancelledBy === undefined) {
      job.cancelledBy = "user";
      job.controller.abort();
    }
    return "Cancelling…";
  }

  /**
   * Interrupts every job (each still sends its final message) and waits for them, and for the
   * endings of recovered jobs, to be delivered.
   */
  async interruptAll(): Promise<void> {
    const jobs = [...this.#jobs.values()];
    for (const job of jobs) {
      if (job.cancelledBy === undefined) job.cancelledBy = "shutdown";
      job.controller.abort();
    }
    await Promise.all([...jobs.map((job) => job.finished), ...this.#recovering]);
  }

  async #run(
    job: Job,
    progressId: number,
    seconds: number,
    keyboard: InlineKeyboardMarkup,
  ): Promise<JobEnd | "taken-over"> {
    const { clock, store } = this.#options;
    const totalMs = seconds * 1000;
    const stepMs = 1000 / this.#options.progressHz;
    const startedAt = clock.now();
    // A group that becomes a supergroup leaves the progress message behind in the old chat.
    const progressChat = this.#messenger.resolve(job.chatId);
    const progressIsLive = () => this.#messenger.resolve(job.chatId) === progressChat;
    let fraction = 0;
    try {
      while (fraction < 1) {
        await clock.sleep(stepMs, { signal: job.controller.signal });
        fraction = Math.min(1, (clock.now() - startedAt) / totalMs);
        store.setProgress(job.id, fraction);
        if (fraction < 1 && progressIsLive()) {
          this.counters.progressRequested++;
          this.#options.onEvent({ type: "progress-requested" });
          const percent = Math.floor(fraction * 100);
          // Not awaited: newer progress supersedes older in the outbox, and the final message
          // drops the pending edit (in a busy group an edit may wait long behind sends).
          void this.#messenger
            .editText(job.chatId, progressId, `Working… ${percent}% ${bar(fraction)}`, keyboard)
            .then((outcome) => this.#options.onEvent({ type: "progress-settled", outcome }));
        }
        if (!this.#messenger.isReachable(job.chatId)) return "undeliverable";
      }
    } catch {
      // Aborted: by the owner's Cancel, by shutdown, or because another process took it over.
    }
    if (job.cancelledBy === "taken-over") return "taken-over";
    const percent = Math.floor(fraction * 100);
    const end: JobEnd =
      fraction >= 1 ? "done" : job.cancelledBy === "user" ? "cancelled" : "interrupted";
    // The owner's name tells whose job ended when several run in one group.
    const text =
      end === "done"
        ? `Done, ${job.ownerName}: ${seconds} s of work finished.`
        : end === "cancelled"
          ? `Cancelled, ${job.ownerName}, at ${percent}%.`
          : `Interrupted, ${job.ownerName}, at ${percent}%: the bot is shutting down.`;
    const replacing = progressIsLive();
    // In a group the bot replaces the progress message itself, so that its delete can skip the
    // group's 20 messages a minute (see Messenger.deleteProgress).
    const inGroup = progressChat < 0;
    const final = await this.#messenger.sendText(
      job.chatId,
      text,
      replacing && !inGroup ? { replaceMessageId: progressId } : {},
    );
    if (final !== undefined) {
      // Only while the chat has not moved: after a hop to the supergroup the id names another
      // message there.
      if (replacing && inGroup && progressIsLive())
        await this.#messenger.deleteProgress(progressChat, progressId);
      return end;
    }
    // The send failed, perhaps after reaching Telegram (a 5xx: the outbox never resends that
    // blindly), and the progress message is still there. Turning it into the final text loses
    // nothing; at worst the final shows twice, when the failed send had been delivered after all.
    if (
      replacing &&
      progressIsLive() &&
      isShown(await this.#messenger.editText(job.chatId, progressId, text))
    )
      return end;
    return "undeliverable";
  }
}
