// Long jobs (/work): each streams progress edits into one message and ends with a replace-progress
// final message. Jobs run detached from the update that started them, so the user's key in the
// dispatcher (and the polling offset) keep moving and a Cancel press is handled while the job runs.

import type { InlineKeyboardMarkup } from "@grammyjs/types";
import { type Clock, createDeferred } from "@telepace/core";
import type { Logger } from "pino";
import type { Messenger } from "./messenger.js";

/** How a job ended. */
export type JobEnd = "done" | "cancelled" | "interrupted" | "undeliverable";

interface Job {
  readonly id: number;
  readonly chatId: number;
  readonly ownerId: number;
  readonly ownerName: string;
  readonly controller: AbortController;
  cancelledBy: "user" | "shutdown" | undefined;
  readonly finished: Promise<JobEnd>;
}

/** Options of {@link WorkJobs}. */
export interface WorkJobsOptions {
  readonly clock: Clock;
  readonly logger: Logger;
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
}

const CANCEL_PREFIX = "cancel:";

function bar(fraction: number): string {
  const filled = Math.round(fraction * 10);
  return `${"▓".repeat(filled)}${"░".repeat(10 - filled)}`;
}

/** The running /work jobs of the bot. */
export class WorkJobs {
  readonly #messenger: Messenger;
  readonly #options: WorkJobsOptions;
  readonly #jobs = new Map<number, Job>();
  #nextId = 1;
  readonly counters: WorkJobCounters = {
    started: 0,
    refused: 0,
    progressRequested: 0,
    ended: { done: 0, cancelled: 0, interrupted: 0, undeliverable: 0 },
  };

  constructor(messenger: Messenger, options: WorkJobsOptions) {
    this.#messenger = messenger;
    this.#options = options;
  }

  get running(): number {
    return this.#jobs.size;
  }

  /** The callback data of a job's Cancel button, or undefined when `data` is not one. */
  static parseCancel(data: string | undefined): number | undefined {
    if (data === undefined || !data.startsWith(CANCEL_PREFIX)) return undefined;
    const id = Number(data.slice(CANCEL_PREFIX.length));
    return Number.isSafeInteger(id) && id > 0 ? id : undefined;
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
    const id = this.#nextId++;
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
    this.counters.started++;
    const controller = new AbortController();
    const finished = createDeferred<JobEnd>();
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
      .then((end) => {
        this.#jobs.delete(id);
        this.counters.ended[end]++;
        finished.resolve(end);
      });
  }

  /** A Cancel press: only the job's owner may cancel it. Returns the text to answer with. */
  cancel(jobId: number, byUserId: number): string {
    const job = this.#jobs.get(jobId);
    if (job === undefined) return "That job has already finished.";
    if (job.ownerId !== byUserId) return "Only the person who started this job can cancel it.";
    if (job.cancelledBy === undefined) {
      job.cancelledBy = "user";
      job.controller.abort();
    }
    return "Cancelling…";
  }

  /** Interrupts every job (each still sends its final message) and waits for them to end. */
  async interruptAll(): Promise<void> {
    const jobs = [...this.#jobs.values()];
    for (const job of jobs) {
      if (job.cancelledBy === undefined) job.cancelledBy = "shutdown";
      job.controller.abort();
    }
    await Promise.all(jobs.map((job) => job.finished));
  }

  async #run(
    job: Job,
    progressId: number,
    seconds: number,
    keyboard: InlineKeyboardMarkup,
  ): Promise<JobEnd> {
    const { clock } = this.#options;
    const totalMs = seconds * 1000;
    const stepMs = 1000 / this.#options.progressHz;
    const startedAt = clock.now();
    // A group that becomes a supergroup leaves the progress message behind in the old chat.
    const progressChat = this.#messenger.resolve(job.chatId);
    const progressIsLive = () => this.#messenger.resolve(job.chatId) === progressChat;
    let fraction = 0;
    let edits: Promise<unknown> = Promise.resolve();
    try {
      while (fraction < 1) {
        await clock.sleep(stepMs, { signal: job.controller.signal });
        fraction = Math.min(1, (clock.now() - startedAt) / totalMs);
        if (fraction < 1 && progressIsLive()) {
          this.counters.progressRequested++;
          const percent = Math.floor(fraction * 100);
          // Not awaited: newer progress supersedes older in the outbox.
          edits = this.#messenger.editText(
            job.chatId,
            progressId,
            `Working… ${percent}% ${bar(fraction)}`,
            keyboard,
          );
        }
        if (!this.#messenger.isReachable(job.chatId)) return "undeliverable";
      }
    } catch {
      // Aborted: by the owner's Cancel, or by shutdown.
    }
    await edits;
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
    const final = await this.#messenger.sendText(
      job.chatId,
      text,
      replacing ? { replaceMessageId: progressId } : {},
    );
    if (final !== undefined) return end;
    // The send failed, perhaps after reaching Telegram (a 5xx: the outbox never resends that
    // blindly), and the progress message is still there. Turning it into the final text loses
    // nothing; at worst the final shows twice, when the failed send had been delivered after all.
    if (
      replacing &&
      progressIsLive() &&
      (await this.#messenger.editText(job.chatId, progressId, text))
    )
      return end;
    return "undeliverable";
  }
}
