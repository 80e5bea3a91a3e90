// run(bot): long polling for a grammY bot through telepace's UpdateIntake. Updates are stored in
// a journal before their offset is confirmed, then run through `bot.handleUpdate` in
// per-principal order, principals in parallel, with bounded memory and a graceful stop.

import type { Update } from "@grammyjs/types";
import { type Clock, checkOptions, type Logger } from "@telepace/core";
import {
  type AllowedUpdate,
  type IntakeCloseResult,
  type IntakeDispatcherOptions,
  UpdateIntake,
  type UpdateIntakeSnapshot,
  type UpdateJournal,
} from "@telepace/update-dispatch";
import { type Bot, BotError, type Context } from "grammy";
import { checkPeerOptions } from "./peer-options.js";
import type { GrammySignal } from "./replace-progress.js";

/** Options of {@link run}. */
export interface RunOptions {
  /**
   * Where updates wait between fetching and finishing. Pass a durable `UpdateJournal` to keep
   * them across a crash or restart; it is not closed by the runner.
   * @defaultValue a new MemoryUpdateJournal (lost on a crash)
   */
  readonly journal?: UpdateJournal | undefined;
  /**
   * Bounds of the dispatcher: `maxConcurrency` (16), `maxQueuedPerPrincipal` (32),
   * `maxActivePrincipals` (256), `timeoutMs` (none), … as in `@telepace/update-dispatch`.
   */
  readonly dispatcher?: IntakeDispatcherOptions | undefined;
  /**
   * Stored updates not finished yet; at the bound fetching pauses. Integer >= 1.
   * @defaultValue 1000
   */
  readonly maxUnfinished?: number | undefined;
  /** `limit` of each getUpdates. Integer 1–100. @defaultValue 100 */
  readonly pollLimit?: number | undefined;
  /** `timeout` of each getUpdates, in seconds. Integer 0–50. @defaultValue 30 */
  readonly pollTimeoutSeconds?: number | undefined;
  /** `allowed_updates` of each getUpdates. @defaultValue not sent (Telegram keeps the last list) */
  readonly allowedUpdates?: readonly AllowedUpdate[] | undefined;
  /**
   * How long `stop()` lets running updates finish (ms) before it aborts them and leaves the rest
   * in the journal. Integer 0–2147483647. @defaultValue 10000
   */
  readonly stopTimeoutMs?: number | undefined;
  /** Time source for waits and deadlines. @defaultValue systemClock */
  readonly clock?: Clock | undefined;
  /** A pino-compatible logger for the intake and dispatcher. @defaultValue silent */
  readonly logger?: Logger | undefined;
}

/** The running bot, as {@link run} returns it. */
export interface RunnerHandle {
  /** The intake underneath: its `journal`, `snapshot()`, `accept()`. */
  readonly intake: UpdateIntake;
  /**
   * Resolves when polling has ended: after `stop()`, or rejects with the error that ended it
   * (`PollingStoppedError` on 409 or a bad token; the `bot.init()` failure).
   */
  task(): Promise<void>;
  /** Whether polling is still going (false after `stop()` or a fatal error). */
  isRunning(): boolean;
  /**
   * Stops fetching, lets running and stored updates finish (within `stopTimeoutMs`), and resolves
   * once they have: `{ status: "drained" | "timed-out", unfinished }`. Calling it again returns
   * the same promise.
   */
  stop(): Promise<IntakeCloseResult>;
  /** The intake's live state and counters. */
  snapshot(): UpdateIntakeSnapshot;
}

const OPTION_NAMES = [
  "journal",
  "dispatcher",
  "maxUnfinished",
  "pollLimit",
  "pollTimeoutSeconds",
  "allowedUpdates",
  "stopTimeoutMs",
  "clock",
  "logger",
] as const satisfies readonly (keyof RunOptions)[];

// Names from bot.start() and grammY runner's run(), and what does that here.
const PEER_OPTIONS: Readonly<Record<string, string>> = Object.freeze({
  timeout: "`pollTimeoutSeconds`",
  limit: "`pollLimit`",
  allowed_updates: "`allowedUpdates`",
  drop_pending_updates:
    "`await bot.api.deleteWebhook({ drop_pending_updates: true })` before `run()`",
  onStart: "`await bot.init()` before `run()`, then `bot.botInfo`",
  source: "`pollLimit`, `pollTimeoutSeconds` and `maxUnfinished`",
  runner: "`pollTimeoutSeconds` and `allowedUpdates`",
  sink: "`dispatcher` (`maxConcurrency`, `timeoutMs`, per-principal bounds)",
});

/** A middleware error goes to `bot.catch`'s handler; anything else is the dispatcher's to log. */
async function handle<C extends Context>(bot: Bot<C>, update: Update): Promise<void> {
  try {
    await bot.handleUpdate(update);
  } catch (error) {
    if (error instanceof BotError) await bot.errorHandler(error as BotError<C>);
    else throw error;
  }
}

/**
 * Runs `bot` by long polling through an `UpdateIntake` (`@telepace/update-dispatch`): each batch
 * from getUpdates is stored in the journal, the next poll confirms it, and `bot.handleUpdate`
 * processes updates in per-principal order (one person in one chat), different principals in
 * parallel, under the dispatcher's bounds. Middleware errors go to `bot.catch`. Calls
 * `bot.init()` first.
 *
 * @throws {TypeError|RangeError} naming the option, when an option is invalid.
 *
 * @example
 * const runner = run(bot);
 * process.once("SIGINT", () => void runner.stop());
 */
export function run<C extends Context>(bot: Bot<C>, options?: RunOptions): RunnerHandle {
  checkPeerOptions(options, PEER_OPTIONS);
  const given = checkOptions("options", options, OPTION_NAMES) as RunOptions;
  const intake = new UpdateIntake((update) => handle(bot, update), {
    getUpdates: (params, { signal }) =>
      bot.api.getUpdates(params, signal as unknown as GrammySignal),
    journal: given.journal,
    dispatcher: given.dispatcher,
    maxUnfinished: given.maxUnfinished,
    pollLimit: given.pollLimit,
    pollTimeoutSeconds: given.pollTimeoutSeconds,
    allowedUpdates: given.allowedUpdates,
    closeTimeoutMs: given.stopTimeoutMs,
    clock: given.clock,
    logger: given.logger,
  });
  const stopping = new AbortController();
  let running = true;
  let stopped: Promise<IntakeCloseResult> | undefined;
  const polling = (async () => {
    try {
      await bot.init(stopping.signal as unknown as GrammySignal);
      await intake.run({ signal: stopping.signal });
    } catch (error) {
      // A stop during bot.init() aborts getMe: that is a stop, not a failure.
      if (!stopping.signal.aborted) throw error;
    } finally {
      running = false;
    }
  })();
  // task() hands the failure to whoever asks; without that it must not be an unhandled rejection.
  polling.catch(() => {});
  return Object.freeze({
    intake,
    task: () => polling,
    isRunning: () => running,
    snapshot: () => intake.snapshot(),
    stop: () => {
      stopped ??= (async () => {
        stopping.abort();
        await polling.catch(() => {});
        return intake.close();
      })();
      return stopped;
    },
  });
}
