// The UpdateIntake of a grammY bot, shared by run() (long polling) and webhookCallback(): its
// updates go through `bot.handleUpdate`, middleware errors to `bot.catch`.

import type { Clock, Logger } from "@telepace/core";
import {
  type IntakeDispatcherOptions,
  UpdateIntake,
  type UpdateIntakeOptions,
  type UpdateJournal,
} from "@telepace/update-dispatch";
import { type Bot, BotError, type Context } from "grammy";
import type { Update } from "grammy/types";

/** Options of the intake underneath {@link run} and {@link webhookCallback}. */
export interface BotIntakeOptions {
  /**
   * Where updates wait between arriving and finishing. Pass a durable `UpdateJournal` to keep
   * them across a crash or restart; it is not closed by the runner.
   * @defaultValue a new MemoryUpdateJournal (lost on a crash)
   */
  readonly journal?: UpdateJournal | undefined;
  /**
   * Bounds of the dispatcher, as in `@telepace/update-dispatch`'s intake: `maxConcurrency`
   * (`maxActivePrincipals` when given, else 256, so every active person's current update may
   * run: 30 people × 3 messages took 4.3 s at 16 slots and 2.2 s at 32 to 256, Telegram time,
   * where the pacing needs 2 s), `maxQueuedPerPrincipal` (32), `maxActivePrincipals`, `timeoutMs`
   * (none), …
   */
  readonly dispatcher?: IntakeDispatcherOptions | undefined;
  /**
   * Unfinished updates held in memory; the rest wait in the journal and are read back in order.
   * Integer >= 1.
   * @defaultValue 1000
   */
  readonly maxUnfinished?: number | undefined;
  /**
   * Stored updates not finished yet, in memory or in the journal; at the bound polling pauses (a
   * webhook answers 503). Integer >= 1.
   * @defaultValue 100000, or 10000 with a journal that is not durable (the default)
   */
  readonly maxJournalUpdates?: number | undefined;
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

/** The names of {@link BotIntakeOptions}, for the whole-options check of each entry. */
export const BOT_INTAKE_OPTION_NAMES = [
  "journal",
  "dispatcher",
  "maxUnfinished",
  "maxJournalUpdates",
  "stopTimeoutMs",
  "clock",
  "logger",
] as const satisfies readonly (keyof BotIntakeOptions)[];

/** A middleware error goes to `bot.catch`'s handler; anything else is the dispatcher's to log. */
async function handle<C extends Context>(bot: Bot<C>, update: Update): Promise<void> {
  try {
    await bot.handleUpdate(update);
  } catch (error) {
    if (error instanceof BotError) await bot.errorHandler(error as BotError<C>);
    else throw error;
  }
}

/** An intake that runs `bot`'s middleware on each stored update; `polling` adds getUpdates. */
export function botIntake<C extends Context>(
  bot: Bot<C>,
  given: BotIntakeOptions,
  polling: Pick<
    UpdateIntakeOptions,
    "getUpdates" | "pollLimit" | "pollTimeoutSeconds" | "allowedUpdates"
  > = {},
): UpdateIntake {
  return new UpdateIntake((update) => handle(bot, update), {
    ...polling,
    journal: given.journal,
    dispatcher: given.dispatcher,
    maxUnfinished: given.maxUnfinished,
    maxJournalUpdates: given.maxJournalUpdates,
    closeTimeoutMs: given.stopTimeoutMs,
    clock: given.clock,
    logger: given.logger,
  });
}
