// The dispatch scenarios with a real intake: long polling against the simulator with a hot
// principal, a crash and restart, and a flood far beyond every bound — telepace's UpdateIntake
// against grammY runner at equal concurrency and at its default, in the same run. (A backlog
// drained by long polling is read from the round-trip sweep: polling-figures.ts.)

import { type RoundSummary, type Rounds, roundSummary, runRounds } from "../rounds.js";
import { ScenarioClock } from "../scenario-clock.js";
import {
  formatCount,
  formatFixed,
  formatRatio,
  formatSpread,
  median,
  ratio,
  type Summary,
  spread,
} from "../stats.js";
import type { Column, Table } from "../table.js";
import { type CrashRun, runCrash } from "./crash.js";
import { type FloodRun, floodIntake, floodRunner } from "./flood.js";
import { intakePoller, type PollerContender, runnerPoller } from "./pollers.js";
import { type PollingRun, runPolling } from "./polling.js";
import { makeUpdateStream, type StreamOptions } from "./workload.js";

/** Sizes of the end-to-end scenarios. */
export interface EndToEndConfig {
  /** Added by the simulator to every Bot API call, ms (a round trip to a nearby server). */
  readonly latencyMs: number;
  /** Arrivals with one principal sending `hotShare` of them. */
  readonly hot: StreamOptions;
  /** A backlog drained by a process that is killed, then by its successor. */
  readonly crash: StreamOptions;
  /** Updates finished before the kill. */
  readonly crashKillAfter: number;
  /**
   * Rounds of the largest flood through the intake (memory journal) and the runner at equal
   * concurrency with no forced collection, for the drain rate alone.
   */
  readonly floodRateRounds: number;
  /** Flood sizes, smallest first; memory is flat when the largest peaks no higher. */
  readonly floodSizes: readonly number[];
  /**
   * The one flood size (of `floodSizes`) the intake over a file journal drains: its rate is one
   * fdatasync per batch of 100 whatever the size, and at 10^6 it would take half a minute.
   */
  readonly floodFileSize: number;
  /** Every polling run gives up this long after it started, ms. */
  readonly deadlineMs: number;
}

const PRIVATE_PRINCIPALS = { principals: 2_000, skew: 0.5, groupShare: 0, groups: 1 } as const;

/** The full-size configuration. */
export const endToEndConfig: EndToEndConfig = {
  latencyMs: 2,
  hot: {
    ...PRIVATE_PRINCIPALS,
    count: 7_500,
    arrivalsPerSecond: 1_500,
    ioMs: [5, 15],
    seed: 12,
    hotShare: 0.17,
  },
  crash: {
    ...PRIVATE_PRINCIPALS,
    count: 3_000,
    arrivalsPerSecond: Number.POSITIVE_INFINITY,
    ioMs: [5, 15],
    seed: 13,
  },
  crashKillAfter: 1_000,
  floodRateRounds: 5,
  floodSizes: [100_000, 1_000_000],
  floodFileSize: 100_000,
  deadlineMs: 30_000,
};

/** What the end-to-end scenarios produced. */
export interface EndToEndResult {
  readonly tables: readonly Table[];
  readonly figures: Readonly<Record<string, unknown>>;
  /** The intake's queueing p99 of everybody but the hot principal, ms. */
  readonly hotPrincipalOthersP99Ms: number;
  /** Order violations of the intake's runs. */
  readonly orderViolations: number;
  /** Updates the intake lost over the crash. */
  readonly lostAfterCrash: number;
  /**
   * The intake's flood drain rate (memory journal, largest flood) ÷ the runner's at equal
   * concurrency: the median of the rate rounds, with `…Min`, `…Max` and `floodRounds`.
   */
  readonly flood: RoundSummary<"floodVsRunner">;
  /** The same with the intake over a FileUpdateJournal. */
  readonly floodFileVsRunner: number;
}

const RATE_ONLY = { isLiveSampled: false } as const;

function pollers(concurrency: number): PollerContender[] {
  return [
    intakePoller({ maxConcurrency: concurrency }),
    runnerPoller({ concurrency }),
    runnerPoller({ concurrency: 500, label: ", its default" }),
  ];
}

function violations(run: PollingRun): number {
  return run.outOfOrderStarts + run.overlappingStarts + run.duplicateStarts;
}

/** `+2 ms per call (getMe measured 2.6 ms)`: the round trip asked for and the one measured. */
export function roundTripLabel(
  latencyMs: number,
  runs: readonly { readonly measuredRoundTripMs: number }[],
): string {
  const measured = median(runs.map((run) => run.measuredRoundTripMs));
  return `+${latencyMs} ms per call (getMe measured ${formatFixed(measured, 1)} ms)`;
}

/** What a run with a hot principal reports about queueing. */
export interface QueueingFigures {
  /** Processor start − send, of everybody but the hot principal, ms. */
  readonly othersQueueingMs: Summary;
  /** The same for the hot principal. */
  readonly hotQueueingMs: Summary;
  /** Updates a bound refused. */
  readonly rejected: number;
}

/** The columns of {@link queueingCells}. */
export const QUEUEING_COLUMNS: readonly Column[] = [
  { header: "others p50" },
  { header: "others p99" },
  { header: "others p99 vs telepace" },
  { header: "hot p99" },
  { header: "rejected" },
];

/** Everybody else's queueing, ÷ the first row's at p99, the hot principal's p99, refusals. */
export function queueingCells(
  run: QueueingFigures,
  base: QueueingFigures,
  ms: (value: number) => string,
): string[] {
  return [
    ms(run.othersQueueingMs.p50),
    ms(run.othersQueueingMs.p99),
    formatRatio(ratio(run.othersQueueingMs.p99, base.othersQueueingMs.p99)),
    ms(run.hotQueueingMs.p99),
    formatCount(run.rejected),
  ];
}

function hotTable(config: EndToEndConfig, runs: readonly PollingRun[]): Table {
  const base = runs[0] as PollingRun;
  const hotRate = config.hot.arrivalsPerSecond * (config.hot.hotShare ?? 0);
  const ms = (value: number): string => `${formatFixed(value, 1)} ms`;
  return {
    title: `Dispatch, a hot principal: ${formatCount(config.hot.count)} updates at ${formatCount(config.hot.arrivalsPerSecond)}/s over ${formatCount(config.hot.principals)} private chats, one of them sending ${Math.round((config.hot.hotShare ?? 0) * 100)}% (${formatCount(hotRate)}/s against about ${formatCount(2000 / (config.hot.ioMs[0] + config.hot.ioMs[1]))}/s served), ${roundTripLabel(config.latencyMs, runs)}`,
    columns: [
      { header: "contender", align: "left" },
      ...QUEUEING_COLUMNS,
      { header: "others late" },
      { header: "peak held" },
      { header: "order violations" },
    ],
    rows: runs.map((run) => [
      run.contender,
      ...queueingCells(run, base, ms),
      formatCount(run.late),
      formatCount(run.peakHeld),
      formatCount(violations(run)),
    ]),
    notes: [
      "queueing = processor start − the moment the user sent the message; the run ends once every other principal's update finished (the hot one's backlog is left)",
      `rejected: the intake's dispatcher rejections and busy answers; the runner never rejects — its sink fills with the hot principal's waiting updates and it stops fetching; late = not started within ${formatCount(config.deadlineMs / 1000)} s`,
    ],
  };
}

function crashTable(config: EndToEndConfig, runs: readonly CrashRun[]): Table {
  return {
    title: `Dispatch, SIGKILL mid-backlog and a restart: ${formatCount(config.crash.count)} updates waiting, the bot process killed after ${formatCount(config.crashKillAfter)} finished`,
    columns: [
      { header: "contender", align: "left" },
      { header: "confirms", align: "left" },
      { header: "finished before kill" },
      { header: "lost" },
      { header: "run again" },
    ],
    rows: runs.map((run) => [
      run.kind === "intake"
        ? `telepace UpdateIntake + FileUpdateJournal (maxConcurrency ${run.concurrency})`
        : `grammY run(bot) + sequentialize (concurrency ${run.concurrency})`,
      run.kind === "intake" ? "after storing" : "on fetch",
      formatCount(run.finishedBeforeKill),
      formatCount(run.lost),
      formatCount(run.repeated),
    ]),
    notes: [
      "a real child process per bot, killed with SIGKILL; each finished update is appended to a file with a plain write, which outlives the process",
      "lost = never finished in either process; run again = finished twice (at-least-once: it had finished but was not yet marked so)",
    ],
  };
}

function floodTable(config: EndToEndConfig, runs: readonly FloodRun[][]): Table {
  const mib = (bytes: number): string => `${formatFixed(bytes / 1_048_576, 1)} MB`;
  const sizes = config.floodSizes;
  const largest = sizes[sizes.length - 1] as number;
  const smallest = sizes[0] as number;
  const rate = (run: FloodRun): number => (run.finished * 1000) / run.durationMs;
  const telepace = runs[0] as FloodRun[];
  const at = (bySize: readonly FloodRun[], size: number) =>
    bySize.find((run) => run.updates === size);
  return {
    title: `Dispatch, a flood: ${sizes.map(formatCount).join(" and ")} updates waiting at once (made on demand), a processor that does nothing`,
    columns: [
      { header: "contender", align: "left" },
      ...sizes.map((size) => ({ header: `live heap, ${formatCount(size)}` })),
      { header: "live growth" },
      ...sizes.map((size) => ({ header: `sampled peak, ${formatCount(size)}` })),
      { header: "updates/s" },
    ],
    rows: runs.map((bySize) => {
      const small = at(bySize, smallest);
      const large = at(bySize, largest);
      // A row drained at one size only (the file journal) is set against telepace at that size.
      const measured = (large ?? bySize[bySize.length - 1]) as FloodRun;
      const base = at(telepace, measured.updates) as FloodRun;
      const cell = (size: number, value: (run: FloodRun) => string): string => {
        const run = at(bySize, size);
        return run === undefined ? "—" : value(run);
      };
      return [
        measured.contender,
        ...sizes.map((size) => cell(size, (run) => mib(run.peakLiveAboveBaselineBytes))),
        small === undefined || large === undefined
          ? "—"
          : formatRatio(ratio(large.peakLiveAboveBaselineBytes, small.peakLiveAboveBaselineBytes)),
        ...sizes.map((size) => cell(size, (run) => mib(run.peakHeapAboveBaselineBytes))),
        `${formatRatio(ratio(rate(measured), rate(base)))}${measured.updates === largest ? "" : ` (at ${formatCount(measured.updates)})`}`,
      ];
    }),
    notes: [
      "live heap = the highest heap in use right after a full collection (every 100 ms, or 4× the last one's length when longer), above the baseline; sampled peak = every 5 ms without collecting (includes garbage)",
      `live growth = live heap at ${formatCount(largest)} ÷ at ${formatCount(smallest)}: about 1× is flat; updates/s is each row ÷ the telepace row, at ${formatCount(largest)} unless the cell names another size`,
      "the intake stores every update in its journal (memory, or a file synced before each poll confirms the batch) and holds at most maxUnfinished (1000) in memory; the runner holds at most its concurrency",
      `the file journal drains ${formatCount(config.floodFileSize)} only: its rate is one fdatasync per batch of 100 at any size, and ${formatCount(largest)} would take it half a minute`,
    ],
  };
}

function floodRateTable(
  config: EndToEndConfig,
  concurrency: number,
  rounds: Rounds<FloodRun>,
): Table {
  const largest = config.floodSizes[config.floodSizes.length - 1] as number;
  const rate = (run: FloodRun): number => (run.finished * 1000) / run.durationMs;
  const ratios = rounds.perRound((run) => ratio(rate(run("intake")), rate(run("runner"))));
  return {
    title: `Dispatch, the flood's drain rate: ${formatCount(largest)} updates waiting, concurrency ${concurrency} on both sides, no forced collection; median of ${config.floodRateRounds} rounds (min–max)`,
    columns: [
      { header: "contender", align: "left" },
      { header: "updates/s" },
      { header: "CPU/update" },
      { header: "vs telepace" },
    ],
    rows: (["intake", "runner"] as const).map((id) => {
      const runs = rounds.of(id);
      return [
        (runs[0] as FloodRun).contender,
        formatSpread(spread(runs.map(rate)), formatCount),
        formatSpread(
          spread(runs.map((run) => run.cpuMicrosPerUpdate)),
          (us) => `${formatFixed(us, 2)} µs`,
        ),
        id === "intake" ? "—" : formatSpread(spread(ratios.map((r) => 1 / r)), formatRatio),
      ];
    }),
    notes: [
      "the heap runs above force a full collection every 100 ms for the live heap; a forced collection leaves the heap and the compiled code it stopped in a state the run then pays for, and the intake (its journal and 1000 unfinished updates live) paid more for it than the runner, so the drain rate comes from these runs, which force none; the rounds alternate which side goes first",
    ],
  };
}

/** Runs every end-to-end scenario. */
export async function runEndToEnd(
  config: EndToEndConfig,
  concurrency: number,
  clock: ScenarioClock = new ScenarioClock(),
): Promise<EndToEndResult> {
  if (!config.floodSizes.includes(config.floodFileSize)) {
    throw new RangeError(
      `Expected \`floodFileSize\` to be one of \`floodSizes\` (${config.floodSizes.join(", ")}), got ${config.floodFileSize}`,
    );
  }
  const hot = await clock.time("hotPrincipal", async () => {
    const stream = makeUpdateStream(config.hot);
    const runs: PollingRun[] = [];
    for (const contender of pollers(concurrency)) {
      runs.push(
        await runPolling(stream, contender, {
          latencyMs: config.latencyMs,
          deadlineMs: config.deadlineMs,
          isHotLeftBehind: true,
        }),
      );
    }
    return runs;
  });

  const crash = await clock.time("crash", async () => {
    const stream = makeUpdateStream(config.crash);
    const runs: CrashRun[] = [];
    for (const [kind, size] of [
      ["intake", concurrency],
      ["runner", concurrency],
      ["runner", 500],
    ] as const) {
      runs.push(
        await runCrash(stream, {
          kind,
          concurrency: size,
          killAfter: config.crashKillAfter,
          latencyMs: config.latencyMs,
          deadlineMs: config.deadlineMs,
          quietMs: 1_000,
        }),
      );
    }
    return runs;
  });

  const largest = config.floodSizes[config.floodSizes.length - 1] as number;
  const flood = await clock.time("flood", async () => {
    const runs: FloodRun[][] = [[], [], [], []];
    for (const size of config.floodSizes) {
      runs[0]?.push(await floodIntake(size, concurrency));
      runs[1]?.push(await floodRunner(size, concurrency));
      runs[2]?.push(await floodRunner(size, 500, ", its default"));
      if (size === config.floodFileSize) {
        runs[3]?.push(await floodIntake(size, concurrency, "file"));
      }
    }
    return runs;
  });
  // The drain rate alone: no forced collection in these runs (the heap runs above have them).
  const floodRates = await clock.time("floodRate", () =>
    runRounds(
      [
        { id: "intake", run: () => floodIntake(largest, concurrency, "memory", RATE_ONLY) },
        { id: "runner", run: () => floodRunner(largest, concurrency, "", RATE_ONLY) },
      ],
      { rounds: config.floodRateRounds, seed: 17, order: "rotate" },
      (contender) => contender.run(),
    ),
  );
  const rate = (run: FloodRun): number => (run.finished * 1000) / run.durationMs;
  const floodRate = (row: number, size: number): number =>
    rate((flood[row] as FloodRun[]).find((run) => run.updates === size) as FloodRun);

  const intakeHot = hot[0] as PollingRun;
  return {
    tables: [
      hotTable(config, hot),
      crashTable(config, crash),
      floodTable(config, flood),
      floodRateTable(config, concurrency, floodRates),
    ],
    figures: { hotPrincipal: hot, crash, flood, floodRates },
    hotPrincipalOthersP99Ms: intakeHot.othersQueueingMs.p99,
    orderViolations: violations(intakeHot),
    lostAfterCrash: (crash[0] as CrashRun).lost,
    flood: roundSummary(config.floodRateRounds, {
      floodVsRunner: floodRates.perRound((run) => ratio(rate(run("intake")), rate(run("runner")))),
    }),
    floodFileVsRunner: ratio(
      floodRate(3, config.floodFileSize),
      floodRate(1, config.floodFileSize),
    ),
  };
}
