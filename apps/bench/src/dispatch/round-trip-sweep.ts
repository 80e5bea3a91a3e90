// The round-trip sweep: one backlog drained by each way a grammY bot author could run a bot — the
// intake at 64 and at its default, the runner at 64 and at its default, bot.start() and a webhook
// — at several round trips to the Bot API, in interleaved rounds. Each rate is set against what
// its settings allow: its slots over the nominal I/O, and 100 updates per measured getUpdates.

import { updateIntakeDefaults } from "@telepace/update-dispatch";
import { Api } from "grammy";
import { type Round, type Rounds, roundSummary, runRounds } from "../rounds.js";
import { formatCount, formatFixed, ratio, spread } from "../stats.js";
import type { Table } from "../table.js";
import { botStartPoller, intakePoller, type PollerContender, runnerPoller } from "./pollers.js";
import { ReplayRecorder } from "./replay.js";
import { openSimLink, type SimLink, simIndexOf } from "./sim-link.js";
import { slotCeilingPerSecond } from "./slot-ceiling.js";
import { webhookContender } from "./webhook-contender.js";
import { makeUpdateStream, type StreamOptions, type UpdateStream } from "./workload.js";

/** Sizes of the sweep. */
export interface RoundTripSweepConfig {
  /** Added by the simulator to every Bot API call (and to every webhook delivery), ms. */
  readonly roundTripsMs: readonly number[];
  /** Rounds per round trip, each running every contender once. */
  readonly rounds: number;
  readonly seed: number;
  /** The backlog, waiting before each run starts; each round draws it with its own seed. */
  readonly backlog: Omit<StreamOptions, "seed" | "count">;
  /**
   * The backlog's size at each of `roundTripsMs` (in that order): more than the fastest
   * contender there finishes by the window's close. Queueing it is each run's largest set-up
   * cost, so a slower round trip gets a smaller one.
   */
  readonly backlogCounts: readonly number[];
  /** After a contender started, how long it runs before the measured window opens, ms. */
  readonly warmUpMs: number;
  /** The measured window: updates finished in it ÷ its length is the drain rate, ms. */
  readonly windowMs: number;
  /** getUpdates calls timed before each run (the median is the measured round trip). */
  readonly probes: number;
}

/** The full-size configuration. */
export const roundTripSweepConfig: RoundTripSweepConfig = {
  roundTripsMs: [0, 2, 10, 30],
  rounds: 5,
  seed: 31,
  backlog: {
    principals: 2_000,
    skew: 0.5,
    groupShare: 0,
    groups: 1,
    arrivalsPerSecond: Number.POSITIVE_INFINITY,
    ioMs: [5, 15],
  },
  // The most any contender finished by the close in the quiet run of 2026-12-02 04:32 UTC: 11,823
  // at 0 ms, 9,906 at 2, 4,496 at 10, 1,815 at 30 (the intake or the runner at its default).
  backlogCounts: [12_000, 12_000, 6_000, 3_000],
  warmUpMs: 200,
  windowMs: 500,
  probes: 3,
};

/** The backlog's size at `roundTripMs`, one of the sweep's round trips. */
export function backlogCountAt(config: RoundTripSweepConfig, roundTripMs: number): number {
  const count = config.backlogCounts[config.roundTripsMs.indexOf(roundTripMs)];
  if (count === undefined || config.backlogCounts.length !== config.roundTripsMs.length) {
    throw new RangeError(
      `Expected a backlog count for each of \`roundTripsMs\` (${config.roundTripsMs.join(", ")}), got ${config.backlogCounts.length}: ${config.backlogCounts.join(", ")}`,
    );
  }
  return count;
}

/** Contender ids, in the order of the table. */
export const SWEEP_CONTENDER_IDS = [
  "intake-64",
  "intake-default",
  "runner-64",
  "runner-default",
  "bot-start",
  "webhook",
] as const;
type ContenderId = (typeof SWEEP_CONTENDER_IDS)[number];

interface SweepContender {
  readonly id: ContenderId;
  readonly poller: PollerContender;
  /** Whether it polls, so 100 updates per getUpdates caps it. */
  readonly isPolling: boolean;
}

function contenders(concurrency: number, roundTripMs: number): SweepContender[] {
  const polling = (id: ContenderId, poller: PollerContender): SweepContender => ({
    id,
    poller,
    isPolling: true,
  });
  return [
    polling("intake-64", intakePoller({ maxConcurrency: concurrency })),
    polling("intake-default", intakePoller({})),
    polling("runner-64", runnerPoller({ concurrency })),
    polling("runner-default", runnerPoller({ concurrency: 500, label: ", its default" })),
    polling("bot-start", botStartPoller()),
    { id: "webhook", poller: webhookContender({ roundTripMs }), isPolling: false },
  ];
}

/** What one contender measured in one round at one round trip. */
export interface SweepRun {
  readonly contender: string;
  readonly roundTripMs: number;
  /** Median of the getUpdates calls timed before the run, ms (grammY's client, loopback HTTP). */
  readonly measuredGetUpdatesMs: number;
  /** Updates finished in the window ÷ its length, updates/s. */
  readonly updatesPerSecond: number;
  /**
   * The most its slots could drain with every slot busy at the backlog's mean nominal I/O (no
   * timer lateness, no cost of its own): slots × 1000 ÷ mean I/O, updates/s.
   */
  readonly nominalCeilingPerSecond: number;
  /** 100 ÷ the measured getUpdates time, updates/s (Infinity for the webhook). */
  readonly getUpdatesCeilingPerSecond: number;
  /** Whether the backlog ran out before the window closed (then the rate is a lower bound). */
  readonly isBacklogExhausted: boolean;
  /**
   * Updates finished from the contender's start to the window's close ÷ that time, updates/s:
   * the drain rate with the start (the first fetches) in it, as a whole backlog has it.
   */
  readonly sinceStartUpdatesPerSecond: number;
  /**
   * The most any dispatcher with its slots could have finished in that time, given how long each
   * of those updates held its slot in this run (see {@link slotCeilingPerSecond}), updates/s.
   */
  readonly slotCeilingPerSecond: number;
  /** getUpdates calls the sim answered during the run. */
  readonly getUpdatesCalls: number;
  /** Updates its getUpdates calls returned ÷ the distinct ones (1 = each fetched once; NaN: none). */
  readonly fetchesPerUpdate: number;
  /** Stored-but-unfinished updates at most (the intake), tasks in the sink at most (runner). */
  readonly peakHeld: number;
  readonly outOfOrderStarts: number;
  readonly overlappingStarts: number;
  readonly duplicateStarts: number;
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** Times `probes` getUpdates calls of a full batch that confirm nothing (no offset); the median. */
async function measureGetUpdatesMs(link: SimLink, probes: number): Promise<number> {
  const api = new Api(link.sim.token, { apiRoot: link.sim.apiRoot });
  const times: number[] = [];
  for (let probe = 0; probe < probes; probe++) {
    const startedAt = performance.now();
    await api.getUpdates({ limit: 100, timeout: 0 });
    times.push(performance.now() - startedAt);
  }
  return spread(times).median;
}

function meanIoMs(stream: UpdateStream): number {
  let total = 0;
  for (const io of stream.ioMs) total += io;
  return total / stream.ioMs.length;
}

/** The lower of the slot ceiling at the nominal I/O and, when it polls, 100 per getUpdates. */
function ceilingOf(run: SweepRun): number {
  return Math.min(run.nominalCeilingPerSecond, run.getUpdatesCeilingPerSecond);
}

async function runOne(
  stream: UpdateStream,
  contender: SweepContender,
  config: RoundTripSweepConfig,
  roundTripMs: number,
): Promise<SweepRun> {
  const link = await openSimLink(stream, roundTripMs);
  try {
    for (let index = 0; index < stream.updates.length; index++) link.send(index);
    const measuredGetUpdatesMs = await measureGetUpdatesMs(link, config.probes);
    // Its own I/O, which the end of the window takes away (see below).
    const played: UpdateStream = { ...stream, ioMs: stream.ioMs.slice() };
    const startedAt = performance.now();
    const recorder = new ReplayRecorder(played, startedAt, { indexOf: simIndexOf });
    const callsBefore = link.sim.counters().calls.getUpdates ?? 0;
    const poller = await contender.poller.start(link, recorder.process);
    await sleep(config.warmUpMs);
    const openedAt = performance.now();
    const finishedBefore = recorder.finished;
    await sleep(config.windowMs);
    const finishedInWindow = recorder.finished - finishedBefore;
    const closedAt = performance.now();
    const windowMs = closedAt - openedAt;
    const trace = recorder.trace();
    const heldByClose = trace.heldMs.slice();
    // What runs after the window no longer counts: without I/O, the updates a contender holds
    // (bot.start()'s batch of 100 at 10 ms each, the runner's sink) finish at once, so stopping
    // takes no second of waiting.
    played.ioMs.fill(0);
    const report = await poller.stop();
    return {
      contender: contender.poller.name,
      roundTripMs,
      measuredGetUpdatesMs,
      updatesPerSecond: (finishedInWindow * 1000) / windowMs,
      nominalCeilingPerSecond: (contender.poller.slots * 1000) / meanIoMs(stream),
      getUpdatesCeilingPerSecond: contender.isPolling
        ? (100 * 1000) / measuredGetUpdatesMs
        : Number.POSITIVE_INFINITY,
      isBacklogExhausted: trace.finished >= stream.updates.length,
      sinceStartUpdatesPerSecond: (trace.finished * 1000) / (closedAt - startedAt),
      slotCeilingPerSecond: slotCeilingPerSecond(
        heldByClose,
        stream.principalOf,
        stream.options.principals,
        contender.poller.slots,
      ),
      getUpdatesCalls: (link.sim.counters().calls.getUpdates ?? 0) - callsBefore,
      fetchesPerUpdate:
        report.distinctFetched === 0 ? Number.NaN : report.fetchedUpdates / report.distinctFetched,
      peakHeld: report.peakHeld,
      outOfOrderStarts: trace.outOfOrderStarts,
      overlappingStarts: trace.overlappingStarts,
      duplicateStarts: trace.duplicateStarts,
    };
  } finally {
    await link.close();
  }
}

/** The sweep at one round trip. */
export interface RoundTripResult {
  readonly roundTripMs: number;
  readonly rounds: Rounds<SweepRun>;
}

/** What the sweep produced. */
export interface RoundTripSweepResult {
  readonly table: Table;
  readonly byRoundTrip: readonly RoundTripResult[];
  /** The summary fields at 10 ms (medians of rounds, with their extremes). */
  readonly summary: Readonly<Record<string, number>>;
  /** Order violations of the intake's runs. */
  readonly orderViolations: number;
}

const violations = (run: SweepRun): number =>
  run.outOfOrderStarts + run.overlappingStarts + run.duplicateStarts;

function sweepTable(
  config: RoundTripSweepConfig,
  results: readonly RoundTripResult[],
  concurrency: number,
): Table {
  const cell = (values: readonly number[], format: (value: number) => string): string => {
    const { median, min, max } = spread(values);
    return `${format(median)} (${format(min)}–${format(max)})`;
  };
  const rows = SWEEP_CONTENDER_IDS.map((id) => {
    const first = results[0]?.rounds.of(id)[0] as SweepRun;
    return [
      first.contender,
      ...results.flatMap(({ rounds }) => {
        const runs = rounds.of(id);
        return [
          cell(
            runs.map((run) => run.updatesPerSecond),
            formatCount,
          ),
          formatFixed(
            spread(runs.map((run) => ratio(run.updatesPerSecond, ceilingOf(run)))).median,
            2,
          ),
        ];
      }),
    ];
  });
  // Every run's probe at that round trip, whichever contender it preceded.
  const measured = results.map(({ rounds }) =>
    SWEEP_CONTENDER_IDS.flatMap((id) => rounds.of(id).map((run) => run.measuredGetUpdatesMs)),
  );
  const { backlog } = config;
  return {
    title: `Dispatch, a round-trip sweep: a backlog of ${results.map(({ roundTripMs }) => formatCount(backlogCountAt(config, roundTripMs))).join(" / ")} updates (at each round trip) over ${formatCount(backlog.principals)} private chats (Zipf ${backlog.skew}), I/O ${backlog.ioMs[0]}–${backlog.ioMs[1]} ms, drained for ${formatCount(config.windowMs)} ms after ${formatCount(config.warmUpMs)} ms; median of ${config.rounds} interleaved rounds (min–max)`,
    columns: [
      { header: "contender", align: "left" },
      ...results.flatMap(({ roundTripMs }) => [
        { header: `+${roundTripMs} ms: updates/s` },
        { header: "of ceiling" },
      ]),
    ],
    rows: [
      ...rows,
      [
        "getUpdates of 100, measured (ms)",
        ...measured.flatMap((values) => [cell(values, (ms) => formatFixed(ms, 1)), ""]),
      ],
    ],
    notes: [
      `round trip = the simulator's added latency on every Bot API call; the webhook's receiving server holds each delivery as long before grammY reads it; getUpdates measured = a full batch of 100 through grammY's client, timed ${config.probes}× before each run (it confirms nothing)`,
      `of ceiling = updates/s ÷ the lower of (that row's slots, every one busy, at the backlog's mean nominal I/O: no timer lateness, no cost of its own) and, for polling, 100 ÷ the measured getUpdates time; slots: ${concurrency} or 500 or the intake's default ${updateIntakeDefaults.maxConcurrency}, bot.start() 1, the webhook its max_connections 40 (a delivery also holds its connection for the round trip, which this ceiling leaves out)`,
      "the intake uses its memory journal; bot.start() handles each batch one update at a time; the webhook answers once grammY's middleware has run, and the simulator sends each chat's next update after that answer",
    ],
  };
}

/** Runs the sweep: for each round trip, `rounds` rounds of every contender in a shuffled order. */
export async function runRoundTripSweep(
  config: RoundTripSweepConfig,
  concurrency: number,
): Promise<RoundTripSweepResult> {
  for (const roundTripMs of config.roundTripsMs) backlogCountAt(config, roundTripMs);
  const byRoundTrip: RoundTripResult[] = [];
  for (const [index, roundTripMs] of config.roundTripsMs.entries()) {
    const count = backlogCountAt(config, roundTripMs);
    const streams = new Map<number, UpdateStream>();
    const streamOf = (round: Round): UpdateStream => {
      let stream = streams.get(round.seed);
      if (stream === undefined) {
        streams.clear();
        stream = makeUpdateStream({ ...config.backlog, count, seed: round.seed });
        streams.set(round.seed, stream);
      }
      return stream;
    };
    const rounds = await runRounds(
      contenders(concurrency, roundTripMs),
      { rounds: config.rounds, seed: config.seed + index * 100 },
      (contender, round) => runOne(streamOf(round), contender, config, roundTripMs),
    );
    const exhausted = SWEEP_CONTENDER_IDS.filter((id) =>
      rounds.of(id).some((run) => run.isBacklogExhausted),
    );
    if (exhausted.length > 0) {
      console.warn(
        `round-trip sweep: the backlog ran out at +${roundTripMs} ms for ${exhausted.join(", ")}; raise its count`,
      );
    }
    byRoundTrip.push({ roundTripMs, rounds });
  }
  const at10 = byRoundTrip.find((result) => result.roundTripMs === 10)?.rounds;
  const summary =
    at10 === undefined
      ? {}
      : roundSummary(config.rounds, {
          measuredGetUpdatesMsAt10ms: at10.of("intake-64").map((run) => run.measuredGetUpdatesMs),
          pollingVsRunnerAt10ms: at10.perRound((result) =>
            ratio(result("intake-64").updatesPerSecond, result("runner-64").updatesPerSecond),
          ),
          pollingDefaultsVsRunnerDefaultsAt10ms: at10.perRound((result) =>
            ratio(
              result("intake-default").updatesPerSecond,
              result("runner-default").updatesPerSecond,
            ),
          ),
          pollingVsNominalCeilingAt10ms: at10.perRound((result) => {
            const run = result("intake-64");
            return ratio(run.updatesPerSecond, ceilingOf(run));
          }),
          // Against the ceiling its slots had with the I/O as long as it really took in the run:
          // what the dispatcher lost itself, without the timers' lateness under the process's load.
          pollingVsSlotCeilingAt10ms: at10.perRound((result) => {
            const run = result("intake-64");
            return ratio(run.updatesPerSecond, run.slotCeilingPerSecond);
          }),
        });
  const { rounds: count, ...figures } = summary as Record<string, number>;
  return {
    table: sweepTable(config, byRoundTrip, concurrency),
    byRoundTrip,
    summary: count === undefined ? figures : { roundTripSweepRounds: count, ...figures },
    orderViolations: byRoundTrip.reduce(
      (sum, { rounds }) =>
        sum +
        [...rounds.of("intake-64"), ...rounds.of("intake-default")].reduce(
          (total, run) => total + violations(run),
          0,
        ),
      0,
    ),
  };
}
