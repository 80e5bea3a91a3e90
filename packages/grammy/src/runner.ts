// run(bot): long polling for a grammY bot through telepace's UpdateIntake. Updates are stored in
// a journal before their offset is confirmed, then run through `bot.handleUpdate` in
// per-principal order, principals in parallel, with bounded memory and a graceful stop.

import { checkOptions } from "@telepace/core";
import type {
  AllowedUpdate,
  IntakeCloseResult,
  UpdateIntake,
  UpdateIntakeSnapshot,
} from "@telepace/update-dispatch";
import type { Bot, Context } from "grammy";
import { BOT_INTAKE_OPTION_NAMES, type BotIntakeOptions, botIntake } from "./bot-intake.js";
import { checkPeerOptions } from "./peer-options.js";
import type { GrammySignal } from "./replace-progress.js";

/** Options of {@link run}. */
export interface RunOptions extends BotIntakeOptions {
  /** `limit` of each getUpdates. Integer 1–100. @defaultValue 100 */
  readonly pollLimit?: number | undefined;
  /** `timeout` of each getUpdates, in seconds. Integer 0–50. @defaultValue 30 */
  readonly pollTimeoutSeconds?: number | undefined;
  /** `allowed_updates` of each getUpdates. @defaultValue not sent (Telegram keeps the last list) */
  readonly allowedUpdates?: readonly AllowedUpdate[] | undefined;
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
  ...BOT_INTAKE_OPTION_NAMES,
  "pollLimit",
  "pollTimeoutSeconds",
  "allowedUpdates",
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
  const intake = botIntake(bot, given, {
    getUpdates: (params, { signal }) =>
      bot.api.getUpdates(params, signal as unknown as GrammySignal),
    pollLimit: given.pollLimit,
    pollTimeoutSeconds: given.pollTimeoutSeconds,
    allowedUpdates: given.allowedUpdates,
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
