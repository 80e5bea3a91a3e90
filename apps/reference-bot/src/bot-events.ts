// What the bot reports as it happens, for a supervisor that must account for every update and job
// across a crash (the embedded demo runs the bot in a child process and kills it with SIGKILL).

/** How a job ended. */
export type JobEnd = "done" | "cancelled" | "interrupted" | "undeliverable";

/**
 * What became of one progress edit a /work job asked for: `sent` (Telegram took it), `unchanged`
 * (Telegram answered "message is not modified"), `coalesced` (a newer edit of the message took
 * its place in the outbox), `dropped` (the job's final message dropped it), `failed`, `closed`
 * (the outbox closed first), `rejected` (the outbox was full) or `skipped` (the chat no longer
 * accepts the bot, so it was never queued).
 */
export type ProgressEditOutcome =
  | "sent"
  | "unchanged"
  | "coalesced"
  | "dropped"
  | "failed"
  | "closed"
  | "rejected"
  | "skipped";

/** How an /ask answer ended. */
export type AnswerEnd = "delivered" | "stopped" | "failed";

/** One thing the bot did; a closed union. */
export type BotEvent =
  /** Processing of an update ended (succeeded, failed or timed out); a replay may repeat it. */
  | {
      readonly type: "update-handled";
      readonly updateId: number;
      readonly outcome: "succeeded" | "failed" | "timed-out";
    }
  /** A getUpdates call returned these updates (before they are stored). */
  | { readonly type: "updates-fetched"; readonly updateIds: readonly number[] }
  /** A /work job asked for a progress edit. */
  | { readonly type: "progress-requested" }
  /** A progress edit settled. */
  | { readonly type: "progress-settled"; readonly outcome: ProgressEditOutcome }
  /** An /ask answer started streaming. */
  | { readonly type: "answer-started" }
  /** An /ask answer ended: the draft frames and edits Telegram accepted while it grew. */
  | {
      readonly type: "answer-ended";
      readonly end: AnswerEnd;
      readonly draftFrames: number;
      readonly edits: number;
    }
  /** A /work job's progress message is out and the job is recorded in the journal. */
  | { readonly type: "job-started"; readonly jobId: string; readonly chatId: number }
  /**
   * A Cancel press was answered: `isElsewhere` when the job did not run in this process (a bot
   * run as several), `isHonoured` when it was cancelled.
   */
  | {
      readonly type: "job-cancel-asked";
      readonly jobId: string;
      readonly isElsewhere: boolean;
      readonly isHonoured: boolean;
    }
  /** A job of this process ended (its final message is out); its record is removed next. */
  | { readonly type: "job-ended"; readonly jobId: string; readonly end: JobEnd }
  /**
   * A job an earlier process left running was found in the journal at start and ended with a
   * message to its user (`isDelivered` false: the chat could not be reached).
   */
  | { readonly type: "job-recovered"; readonly jobId: string; readonly isDelivered: boolean }
  /** The bot stopped writing to a chat (blocked, removed) or may write again. */
  | { readonly type: "chat-reachability"; readonly chatId: number; readonly isReachable: boolean };

/** Receives {@link BotEvent}s synchronously, in order; it must not throw. */
export type BotEventSink = (event: BotEvent) => void;
