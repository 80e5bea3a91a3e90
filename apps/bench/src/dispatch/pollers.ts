// The long-polling contenders against the simulator, each as a grammY bot author would wire it:
// telepace's UpdateIntake feeding `bot.handleUpdate`, and grammY runner's `run(bot)` with
// `sequentialize`. Both use the same grammY `Bot` (its HTTP client and middleware), so only
// fetching and dispatching differ.

import { run, sequentialize } from "@grammyjs/runner";
import type { Update } from "@grammyjs/types";
import { UpdateIntake, updateIntakeDefaults } from "@telepace/update-dispatch";
import { Bot, type Context } from "grammy";
import type { SimLink } from "./sim-link.js";
import type { RunJournal } from "./temporary-journal.js";
import { principalConstraint } from "./workload.js";

/** grammY's Node build types the signal with the `abort-controller` shim. */
type GrammySignal = Parameters<Bot["api"]["getUpdates"]>[1];
type GrammyGetUpdatesParams = Parameters<Bot["api"]["getUpdates"]>[0];

/** What a poller reports besides the recorder's trace. */
export interface PollerReport {
  /** Updates a bound refused (the intake's dispatcher rejections plus `busy` answers). */
  readonly rejected: number;
  /** Stored-but-unfinished updates at most (the intake), or tasks in the sink at most (runner). */
  readonly peakHeld: number;
  /** Updates its getUpdates calls returned, each time one came (0 for a webhook). */
  readonly fetchedUpdates: number;
  /** Distinct updates among them (by update id). */
  readonly distinctFetched: number;
}

/** A running poller: `stop()` ends polling and reports. */
export interface RunningPoller {
  stop(): Promise<PollerReport>;
}

/** One side of a polling comparison. */
export interface PollerContender {
  readonly name: string;
  readonly settings: Readonly<Record<string, number | string | boolean>>;
  /** Processors it runs at once at most (its concurrency setting). */
  readonly slots: number;
  /**
   * Whether an update is confirmed to Telegram only once stored or processed (at-least-once on a
   * crash), rather than on fetch.
   */
  readonly isConfirmedAfterStore: boolean;
  /** Starts polling `link`'s bot; every update goes to `process`. */
  start(link: SimLink, process: (update: Update) => unknown): Promise<RunningPoller>;
}

/** Counts what a bot's getUpdates calls return: every update, and the distinct ones. */
class FetchCount {
  updates = 0;
  readonly #ids = new Set<number>();

  get distinct(): number {
    return this.#ids.size;
  }

  add(updates: readonly Update[]): void {
    this.updates += updates.length;
    for (const update of updates) this.#ids.add(update.update_id);
  }
}

/** A grammY bot on the link's sim, counting what its getUpdates calls return into `fetched`. */
async function botFor(link: SimLink, fetched = new FetchCount()): Promise<Bot> {
  const bot = new Bot(link.sim.token, { client: { apiRoot: link.sim.apiRoot } });
  bot.api.config.use(async (prev, method, payload, signal) => {
    const response = await prev(method, payload, signal);
    if (method === "getUpdates" && response.ok) fetched.add(response.result as Update[]);
    return response;
  });
  await bot.init();
  return bot;
}

/** Samples a gauge every 5 ms and keeps its maximum. */
function peakOf(gauge: () => number): { stop(): number } {
  let peak = 0;
  const timer = setInterval(() => {
    peak = Math.max(peak, gauge());
  }, 5);
  return {
    stop() {
      clearInterval(timer);
      return Math.max(peak, gauge());
    },
  };
}

/**
 * UpdateIntake with its defaults (memory journal, maxUnfinished 1000) and `maxConcurrency` (its
 * default, 256, when not given), or with the journal `journal` opens for the run.
 */
export function intakePoller(options: {
  maxConcurrency?: number;
  journal?: { readonly name: string; open(): Promise<RunJournal> };
}): PollerContender {
  const journalName = options.journal?.name ?? "MemoryUpdateJournal";
  const slots = options.maxConcurrency ?? updateIntakeDefaults.maxConcurrency;
  const isDefault = options.maxConcurrency === undefined;
  return {
    name: `telepace UpdateIntake${options.journal === undefined ? "" : ` + ${journalName}`} (maxConcurrency ${slots}${isDefault ? ", its default" : ""})`,
    settings: {
      maxConcurrency: slots,
      maxUnfinished: 1000,
      pollLimit: 100,
      journal: journalName,
    },
    slots,
    isConfirmedAfterStore: true,
    async start(link, process) {
      const fetched = new FetchCount();
      const bot = await botFor(link, fetched);
      bot.use((ctx: Context) => process(ctx.update));
      const opened = await options.journal?.open();
      const intake = new UpdateIntake((update) => bot.handleUpdate(update), {
        getUpdates: (params, { signal }) =>
          bot.api.getUpdates({ ...params } as GrammyGetUpdatesParams, signal as GrammySignal),
        dispatcher: isDefault ? {} : { maxConcurrency: slots },
        journal: opened?.journal,
      });
      const stopping = new AbortController();
      const polling = intake.run({ signal: stopping.signal });
      const held = peakOf(() => intake.snapshot().unfinished);
      return {
        async stop() {
          stopping.abort();
          await polling;
          const snapshot = intake.snapshot();
          await intake.close({ timeoutMs: 0 });
          await opened?.dispose();
          const rejected = Object.values(snapshot.dispatcher.rejected).reduce((a, b) => a + b, 0);
          return {
            rejected: rejected + snapshot.busy,
            peakHeld: held.stop(),
            fetchedUpdates: fetched.updates,
            distinctFetched: fetched.distinct,
          };
        },
      };
    },
  };
}

/** grammY runner's `run(bot)`, `sequentialize` by principal first in the middleware. */
export function runnerPoller(options: { concurrency: number; label?: string }): PollerContender {
  return {
    name: `grammY run(bot) + sequentialize (concurrency ${options.concurrency}${options.label ?? ""})`,
    settings: { concurrency: options.concurrency },
    slots: options.concurrency,
    isConfirmedAfterStore: false,
    async start(link, process) {
      const fetched = new FetchCount();
      const bot = await botFor(link, fetched);
      bot.use(sequentialize((ctx: Context) => principalConstraint(ctx.update)));
      bot.use((ctx: Context) => process(ctx.update));
      const handle = run(bot, {
        sink: { concurrency: options.concurrency },
        runner: { silent: true },
      });
      const held = peakOf(() => handle.size());
      return {
        async stop() {
          // The loop exits once the sink takes its last batch; a hot principal's backlog may
          // hold it for seconds, and what it still runs no longer counts.
          await Promise.race([handle.stop(), new Promise((resolve) => setTimeout(resolve, 1_000))]);
          return {
            rejected: 0,
            peakHeld: held.stop(),
            fetchedUpdates: fetched.updates,
            distinctFetched: fetched.distinct,
          };
        },
      };
    },
  };
}

/**
 * grammY's own long polling, `bot.start()`: one `getUpdates` (100 at most), then its updates one
 * at a time, then the next call. Per-principal order needs nothing more.
 */
export function botStartPoller(): PollerContender {
  return {
    name: "grammY bot.start()",
    settings: { concurrency: 1 },
    slots: 1,
    isConfirmedAfterStore: true, // the next getUpdates confirms a batch once it was processed
    async start(link, process) {
      const fetched = new FetchCount();
      const bot = await botFor(link, fetched);
      bot.use((ctx: Context) => process(ctx.update));
      const polling = bot.start();
      return {
        async stop() {
          await bot.stop();
          // What it runs after the stop no longer counts; the batch in hand may take a while.
          await Promise.race([polling, new Promise((resolve) => setTimeout(resolve, 1_000))]);
          return {
            rejected: 0,
            peakHeld: 1,
            fetchedUpdates: fetched.updates,
            distinctFetched: fetched.distinct,
          };
        },
      };
    },
  };
}
