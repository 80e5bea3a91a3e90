// The writes comparison: each workload replayed against a fresh time-scaled sim, once per
// contender, each stopped at the same deadline after its last message was issued. The workloads
// a summary ratio reads repeat in rounds for the contenders that ratio compares.

import { setMaxListeners } from "node:events";
import { start } from "@telepace/bot-api-sim";
import type { AreaResult } from "../report.js";
import { type RoundSummary, roundSummary, runRounds } from "../rounds.js";
import type { BenchScope } from "../scope.js";
import { formatCount, formatFixed, formatRatio, ratio } from "../stats.js";
import type { Table } from "../table.js";
import { analyse, type Bounded, type RunFigures } from "./analysis.js";
import { measureRoundTrip, type RoundTrip } from "./round-trip.js";
import {
  createChats,
  replay,
  type WorkloadSizes,
  type WritePlan,
  writePlans,
} from "./workloads.js";
import {
  checkPace,
  type GrammyRecipe,
  grammyTelepaceWriter,
  grammyWriter,
  type PaceCheck,
  type Target,
  telepaceWriter,
  type Writer,
} from "./writers.js";

/** Sizes and timing of the writes comparison. */
export interface WritesConfig {
  /**
   * How many times faster than real time the sim runs Telegram's limits, per workload. Kept low
   * enough that the peers' limiter keeps Telegram's pace in real time (see the calibration).
   */
  readonly scales: Readonly<Record<WritePlan["id"], number>>;
  /**
   * Per workload, how long after its last message a run may take before what is left counts as
   * late, Telegram ms. Only runs that fall behind wait for it.
   */
  readonly deadlinesMs: Readonly<Record<WritePlan["id"], number>>;
  /**
   * Rounds of the workloads a summary ratio reads (streaming, broadcast), integer >= 1: each
   * round runs the contenders a ratio reads on that round's workload seed; the table is round 0.
   */
  readonly rounds: number;
  readonly sizes: WorkloadSizes;
}

/** The workloads whose summary ratios are medians over {@link WritesConfig.rounds}. */
export const ROUNDED_WORKLOADS: readonly WritePlan["id"][] = ["streaming", "broadcast"];

/** The full-size configuration `pnpm bench` uses. */
export const writesConfig: WritesConfig = {
  scales: { streaming: 8, broadcast: 2, mix: 8, faults: 4 },
  // Faults keep 30 s: auto-retry's 3 s of real time between retries is 12 s of Telegram time at
  // ×4. Elsewhere only the naive rows fall behind, and 15 s already shows them far behind.
  deadlinesMs: { streaming: 15_000, broadcast: 15_000, mix: 15_000, faults: 30_000 },
  rounds: 5,
  sizes: {
    streamingChats: 10,
    broadcastChats: 150,
    mixPrivateChats: 9,
    mixGroups: 3,
    streamMs: [8_000, 12_000],
    staggerMs: 2_000,
    repliesPerChat: 3,
    faultChats: 30,
    faultMessagesAtMs: [0, 1_500, 3_000],
    faults: { resetAfterProcessing: 3, badGatewayBeforeProcessing: 3 },
    seed: 11,
  },
};

/**
 * Whether a summary ratio reads the contender, so it runs in every round: TelegramClient (the
 * summary's telepace) and the fair peer. Every other row, the grammY plugin included, runs once.
 */
export function readByRatio(contender: Contender): boolean {
  return contender.id === "telepace-client" || contender.role === "fair-peer";
}

/** Makes a contender for one run. */
export type WriterFactory = (target: Target) => Writer;

/**
 * A contender and what the summary reads it as: `telepace` (the outbox at its defaults, under
 * TelegramClient or grammY), `fair-peer` (throttler then auto-retry, latest-only edits), or any
 * other row.
 */
export interface Contender {
  /** Distinct within a workload. */
  readonly id: string;
  readonly make: WriterFactory;
  readonly role: "telepace" | "fair-peer" | "other";
}

/**
 * The contenders of a workload, telepace first. The naive rows (an edit per state, which no
 * summary figure reads) are in the full scope only.
 */
export function contenders(plan: WritePlan, scope: BenchScope = "full"): Contender[] {
  const hasEdits = plan.chats.some((chat) => chat.stream !== undefined);
  const stacks: GrammyRecipe["install"][] = [
    ["throttler", "auto-retry"],
    ["auto-retry", "throttler"],
    ["auto-retry"],
  ];
  const modes: GrammyRecipe["edits"][] = !hasEdits
    ? ["none"]
    : scope === "full"
      ? ["every-state", "latest-only"]
      : ["latest-only"];
  const peer = (recipe: GrammyRecipe): Contender => ({
    id: `grammy:${recipe.install.join("+")}:${recipe.edits}${recipe.rethrowHttpErrors === true ? ":rethrow" : ""}`,
    make: (target) => grammyWriter(target, recipe),
    role:
      recipe.edits === "latest-only" && recipe.install[0] === "throttler" ? "fair-peer" : "other",
  });
  // Under faults, each policy for maybe-delivered sends, and auto-retry passing network errors on.
  const faultRows: Contender[] =
    plan.faults === undefined
      ? []
      : [
          ...(["resend", "resolve"] as const).map(
            (policy): Contender => ({
              id: `telepace-grammy:${policy}`,
              make: (target) => grammyTelepaceWriter(target, policy),
              role: "other",
            }),
          ),
          peer({ install: ["throttler", "auto-retry"], edits: "none", rethrowHttpErrors: true }),
        ];
  return [
    { id: "telepace-client", make: telepaceWriter, role: "telepace" },
    { id: "telepace-grammy", make: (target) => grammyTelepaceWriter(target), role: "telepace" },
    ...faultRows.slice(0, 2),
    ...modes.flatMap((edits) => stacks.map((install) => peer({ install, edits }))),
    ...faultRows.slice(2),
  ];
}

/** One contender's run of one workload. */
export interface WriteRun extends RunFigures {
  readonly contender: string;
  readonly role: Contender["role"];
  readonly settings: Readonly<Record<string, string | number>>;
  readonly clientCounters: Readonly<Record<string, number>>;
  /** Real time from the start of the replay to the end of the run, ms. */
  readonly realDurationMs: number;
  /** Whether the run ended at the deadline with work left. */
  readonly hitDeadline: boolean;
}

/** Replays one workload for one contender against a fresh sim and measures it. */
export async function runOne(
  plan: WritePlan,
  contender: Contender,
  config: WritesConfig,
): Promise<WriteRun> {
  const scale = config.scales[plan.id];
  const sim = await start({ timeScale: scale });
  const controller = new AbortController();
  // One signal reaches every request of the run; it is not a leak.
  setMaxListeners(0, controller.signal);
  try {
    const chatIds = createChats(sim, plan);
    if (plan.faults !== undefined) {
      sim.faults.resetNext("sendMessage", plan.faults.resetAfterProcessing, {
        afterProcessing: true,
      });
      sim.faults.failNext("sendMessage", plan.faults.badGatewayBeforeProcessing, { code: 502 });
    }
    const writer = contender.make({
      apiRoot: sim.apiRoot,
      token: sim.token,
      scale,
      signal: controller.signal,
    });
    const running = replay(plan, chatIds, writer, scale);
    await running.issued;
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<"deadline">((resolve) => {
      const wait =
        running.log.lastIssuedAt + config.deadlinesMs[plan.id] / scale - performance.now();
      timer = setTimeout(() => resolve("deadline"), Math.max(0, wait));
    });
    const ending = await Promise.race([
      running.settled.then(() => writer.idle()).then(() => "done" as const),
      deadline,
    ]);
    clearTimeout(timer);
    const endedAt = performance.now();
    const counters = sim.counters();
    const transcripts = new Map(chatIds.map((id) => [id, sim.transcript(id).events]));
    controller.abort();
    await writer.close();
    return {
      contender: writer.name,
      role: contender.role,
      settings: writer.settings,
      clientCounters: { ...writer.counters },
      realDurationMs: endedAt - running.log.startedAt,
      hitDeadline: ending === "deadline",
      ...analyse(running.log, transcripts, counters, scale, endedAt),
    };
  } finally {
    controller.abort();
    await sim.close({ timeoutMs: 500 });
  }
}

function seconds(ms: number): string {
  return `${formatFixed(ms / 1000, 1)} s`;
}

function boundedRatio(value: Bounded, base: Bounded): string {
  if (base.isLowerBound) return "n/a";
  const text = formatRatio(ratio(value.value, base.value));
  return value.isLowerBound ? `>${text}` : text;
}

function workloadTable(
  plan: WritePlan,
  runs: readonly WriteRun[],
  pace: readonly PaceCheck[],
  roundTrip: RoundTrip | undefined,
  config: WritesConfig,
): Table {
  const base = runs[0] as WriteRun;
  const scale = config.scales[plan.id];
  const hasStreams = plan.chats.some((chat) => chat.stream !== undefined);
  return {
    title: `Writes ${plan.title}; limits ×${scale} faster`,
    columns: [
      { header: "contender", align: "left" },
      { header: "API calls" },
      { header: "429s" },
      { header: "msg p50" },
      { header: "msg p99" },
      { header: "staleness p99" },
      { header: "order viol." },
      { header: "lost" },
      { header: "late" },
      { header: "maybe-deliv." },
    ],
    rows: runs.map((run) => [
      run.contender,
      formatRatio(ratio(run.apiCalls, base.apiCalls)),
      formatCount(run.tooManyRequests),
      boundedRatio(run.messageLatencyMs.p50, base.messageLatencyMs.p50),
      boundedRatio(run.messageLatencyMs.p99, base.messageLatencyMs.p99),
      hasStreams ? formatRatio(ratio(run.stalenessMs.p99, base.stalenessMs.p99)) : "—",
      formatCount(run.orderViolations + run.duplicates),
      formatCount(run.lost),
      formatCount(run.lateAtDeadline),
      formatCount(run.maybeDelivered),
    ]),
    notes: [
      `ratios are each row ÷ the telepace row; telepace: ${formatCount(base.apiCalls)} calls, message latency p50 ${seconds(base.messageLatencyMs.p50.value)} / p99 ${seconds(base.messageLatencyMs.p99.value)}${hasStreams ? `, staleness p99 ${seconds(base.stalenessMs.p99)}` : ""} (Telegram time)`,
      `msg = ${hasStreams ? "final messages and replies" : "each message"}, from the call to the sim storing it; ">" marks a lower bound (messages still undelivered ${seconds(config.deadlinesMs[plan.id])} after the last one was issued: "late")`,
      `at ×${scale}, sends to distinct chats in isolation (nominal 30/s after a burst of 30): ${pace.map((check) => `${check.limiter} ${formatFixed(check.sendsPerSecond, 1)}/s`).join(", ")}`,
      ...(roundTrip === undefined
        ? []
        : [
            `round trip at ×${scale}: one sendMessage alone on a warm connection, median ${formatFixed(roundTrip.medianMs, 1)} ms, p90 ${formatFixed(roundTrip.p90Ms, 1)} ms of Telegram time (${roundTrip.samples} samples)`,
          ]),
      ...(hasStreams
        ? [
            `staleness = how long the progress text on screen had been out of date, sampled every 50 ms; [latest-only edits: fair peer] = the author keeps one edit in flight and then sends the newest text (coalescing by hand); ${runs.some((run) => run.contender.includes("[edit per state: naive]")) ? "[edit per state: naive] = an editMessageText per state, what an author writes without coalescing" : "the naive rows (an editMessageText per state, what an author writes without coalescing): pnpm bench:full"}; grammY + @telepace/grammy issues an edit per state too (the plugin coalesces)`,
          ]
        : []),
    ],
  };
}

function faultTable(plan: WritePlan, runs: readonly WriteRun[], config: WritesConfig): Table {
  const base = runs[0] as WriteRun;
  const total = plan.chats.reduce((sum, chat) => sum + chat.repliesAtMs.length, 0);
  return {
    title: `Writes ${plan.title}; limits ×${config.scales[plan.id]} faster`,
    columns: [
      { header: "contender", align: "left" },
      { header: "API calls" },
      { header: "arrived" },
      { header: "duplicates" },
      { header: "order viol." },
      { header: "missing" },
      { header: "reported maybe-delivered" },
      { header: "never sent (handler stopped)" },
      { header: "lost silently" },
    ],
    rows: runs.map((run) => [
      run.contender,
      formatRatio(ratio(run.apiCalls, base.apiCalls)),
      `${formatCount(total - run.missing)}/${formatCount(total)}`,
      formatCount(run.duplicates),
      formatCount(run.orderViolations),
      formatCount(run.missing),
      `${formatCount(run.maybeDelivered)} (${formatCount(run.maybeDeliveredMissing)} missing)`,
      formatCount(run.notSent),
      formatCount(run.lost + run.lateAtDeadline),
    ]),
    notes: [
      `API calls ÷ the telepace row (${formatCount(base.apiCalls)}); the Bot API has no idempotency key, so after a lost answer a client either resends (risking a duplicate) or reports the send as maybe-delivered`,
      "auto-retry waits 3 s of real time before retrying a 5xx or network error and has no option to shorten it, so latency is not compared here",
      "each chat's messages come from one handler without try/catch: a send that throws ends it, and its later messages are never sent (the error reaches bot.catch); TelegramClient returns outcomes instead of throwing, so its handlers go on",
      "maybeDelivered: throw (the default) rejects a send that may have arrived, resend sends it again as auto-retry does, resolve resolves it as delivery unknown",
      "lost silently = missing without the client saying it may have been delivered (failed, or still pending at the deadline)",
    ],
  };
}

/** The headline figures (`areas.writes.summary`); a figure is NaN when its workload did not run. */
export type WritesSummary = RoundSummary<
  "finalP99VsFairPeer" | "broadcastVsIdeal" | "broadcastVsIdealAtRoundTrip"
> & {
  /** (b)'s round trip: one sendMessage alone on a warm connection, Telegram ms (median). */
  readonly broadcastRoundTripMs: number;
  /** 429s earned by the telepace rows (TelegramClient, grammY plugin at its defaults), every run. */
  readonly rateLimited: number;
  /** (d) faults: messages the telepace rows delivered twice. */
  readonly duplicatesUnderFaults: number;
};

/** Telegram ms the last of `chats` one-message sends needs at 30/s with a burst of 30. */
export function idealBroadcastMs(chats: number): number {
  return (Math.max(0, chats - 30) / 30) * 1000;
}

/**
 * Telegram ms the last of `chats` one-message sends needs at 30/s after a burst of 30 when no two
 * of them may reach Telegram within one second and each may arrive as late as its answer: every
 * further second starts `roundTripMs` after the answer of the request it follows, and the last
 * message still travels half a round trip.
 */
export function idealBroadcastAtRoundTripMs(chats: number, roundTripMs: number): number {
  const seconds = Math.ceil(Math.max(0, chats - 30) / 30);
  return idealBroadcastMs(chats) + seconds * roundTripMs + roundTripMs / 2;
}

/** One workload as the summary reads it: every round's runs (a workload without rounds has one). */
export interface WorkloadRounds {
  readonly plan: WritePlan;
  readonly rounds: readonly (readonly WriteRun[])[];
  /** The round trip measured before the workload's runs (none for faults). */
  readonly roundTrip?: RoundTrip | undefined;
}

/**
 * (a) streaming: TelegramClient's final-message p99 ÷ the fair peer's (throttler → auto-retry,
 * latest-only edits), per round; (b) broadcast: TelegramClient's last message ÷ the ideal at 30/s
 * after a burst of 30, per round; both reduced to medians.
 */
export function writesSummary(
  results: readonly WorkloadRounds[],
  config: WritesConfig,
): WritesSummary {
  const roundsOf = (id: WritePlan["id"]) =>
    results.find((result) => result.plan.id === id)?.rounds ?? [];
  const first = (runs: readonly WriteRun[], role: Contender["role"]) =>
    runs.find((run) => run.role === role);
  const perRound = (id: WritePlan["id"], figure: (runs: readonly WriteRun[]) => number) => {
    const figures = roundsOf(id).map(figure);
    return figures.length === config.rounds ? figures : Array(config.rounds).fill(Number.NaN);
  };
  const telepace = results.flatMap(({ rounds }) =>
    rounds.flatMap((runs) => runs.filter((run) => run.role === "telepace")),
  );
  const roundTripMs =
    results.find((result) => result.plan.id === "broadcast")?.roundTrip?.medianMs ?? Number.NaN;
  const lastMessage = (runs: readonly WriteRun[]) =>
    first(runs, "telepace")?.messageLatencyMs.max.value ?? Number.NaN;
  return {
    ...roundSummary(config.rounds, {
      finalP99VsFairPeer: perRound("streaming", (runs) => {
        const ours = first(runs, "telepace");
        const peer = first(runs, "fair-peer");
        return ours === undefined || peer === undefined
          ? Number.NaN
          : ratio(ours.messageLatencyMs.p99.value, peer.messageLatencyMs.p99.value);
      }),
      broadcastVsIdeal: perRound("broadcast", (runs) =>
        ratio(lastMessage(runs), idealBroadcastMs(config.sizes.broadcastChats)),
      ),
      broadcastVsIdealAtRoundTrip: perRound("broadcast", (runs) =>
        ratio(
          lastMessage(runs),
          idealBroadcastAtRoundTripMs(config.sizes.broadcastChats, roundTripMs),
        ),
      ),
    }),
    broadcastRoundTripMs: roundTripMs,
    rateLimited: telepace.reduce((sum, run) => sum + run.tooManyRequests, 0),
    duplicatesUnderFaults: roundsOf("faults")
      .flatMap((runs) => runs.filter((run) => run.role === "telepace"))
      .reduce((sum, run) => sum + run.duplicates, 0),
  };
}

/**
 * Runs one workload: the contenders a summary ratio reads in rounds (when the workload has them),
 * then the other rows once on round 0's workload. The table shows round 0.
 */
async function runWorkload(
  plan: WritePlan,
  config: WritesConfig,
  scope: BenchScope,
): Promise<{ runs: WriteRun[]; rounds: WriteRun[][] }> {
  const all = contenders(plan, scope);
  if (!ROUNDED_WORKLOADS.includes(plan.id)) {
    const runs: WriteRun[] = [];
    for (const contender of all) runs.push(await runOne(plan, contender, config));
    return { runs, rounds: [runs] };
  }
  const headline = all.filter(readByRatio);
  const planOf = (seed: number) =>
    writePlans({ ...config.sizes, seed }).find(
      (candidate) => candidate.id === plan.id,
    ) as WritePlan;
  const rounds = await runRounds(
    headline,
    { rounds: config.rounds, seed: config.sizes.seed },
    (contender, round) => runOne(planOf(round.seed), contender, config),
  );
  const runs: WriteRun[] = [];
  for (const contender of all) {
    runs.push(
      readByRatio(contender) ? rounds.get(0, contender.id) : await runOne(plan, contender, config),
    );
  }
  // Round 0 holds every row (its headline runs among them), so the counts sum every run.
  return {
    runs,
    rounds: rounds.rounds.map((round) =>
      round.index === 0 ? runs : headline.map(({ id }) => rounds.get(round.index, id)),
    ),
  };
}

/** What a table reports of its scale: each limiter's pace alone and the round trip. */
export interface ScaleCheck {
  readonly pace: PaceCheck[];
  readonly roundTrip: RoundTrip;
}

/**
 * Measures each scale the tables report once, before any workload runs: the checks depend on the
 * scale alone, so workloads that share one (streaming and mix, ×8) share its check. The fault
 * workload reports none.
 */
export async function checksByScale(
  plans: readonly WritePlan[],
  config: WritesConfig,
  measure: (scale: number) => Promise<ScaleCheck>,
): Promise<Map<number, ScaleCheck>> {
  const checks = new Map<number, ScaleCheck>();
  for (const plan of plans) {
    const scale = config.scales[plan.id];
    if (plan.faults !== undefined || checks.has(scale)) continue;
    checks.set(scale, await measure(scale));
  }
  return checks;
}

/** Runs the writes comparison; the full scope adds the naive rows. */
export async function runWrites(
  config: WritesConfig = writesConfig,
  only?: readonly WritePlan["id"][],
  scope: BenchScope = "headline",
): Promise<AreaResult> {
  const startedAt = performance.now();
  const plans = writePlans(config.sizes).filter((plan) => only?.includes(plan.id) ?? true);
  const results: {
    plan: WritePlan;
    runs: WriteRun[];
    rounds: WriteRun[][];
    pace: PaceCheck[];
    roundTrip: RoundTrip | undefined;
  }[] = [];
  const checks = await checksByScale(plans, config, async (scale) => ({
    pace: await checkPace(scale),
    roundTrip: await measureRoundTrip(scale),
  }));
  for (const plan of plans) {
    const check = checks.get(config.scales[plan.id]);
    results.push({
      plan,
      pace: plan.faults === undefined ? (check?.pace ?? []) : [],
      roundTrip: plan.faults === undefined ? check?.roundTrip : undefined,
      ...(await runWorkload(plan, config, scope)),
    });
  }
  const summary = writesSummary(results, config);
  return {
    area: "writes",
    tables: [
      ...results.map(({ plan, runs, pace, roundTrip }) =>
        plan.faults === undefined
          ? workloadTable(plan, runs, pace, roundTrip, config)
          : faultTable(plan, runs, config),
      ),
      {
        title: "Writes, summary (areas.writes.summary)",
        columns: [{ header: "figure", align: "left" }, { header: "value" }],
        rows: Object.entries(summary).map(([key, value]) => [key, formatFixed(value, 3)]),
        notes: [
          `finalP99VsFairPeer: (a), TelegramClient's final p99 ÷ throttler → auto-retry with latest-only edits; broadcastVsIdeal: (b), the last message ÷ (chats − 30) / 30 s; broadcastVsIdealAtRoundTrip: the same ÷ that ideal plus a round trip per further second and half a round trip (broadcastRoundTripMs, Telegram ms), the least a client that never lets two requests meet in one Telegram second can take; each the median of ${config.rounds} rounds (min and max beside it), a round being those contenders on that round's workload seed; the tables above are round 0`,
          "rateLimited and duplicatesUnderFaults: the telepace rows at their defaults (TelegramClient, grammY plugin), summed over every run",
        ],
      },
    ],
    durationMs: performance.now() - startedAt,
    figures: {
      summary,
      config,
      workloads: results.map(({ plan, runs, rounds, pace, roundTrip }) => ({
        id: plan.id,
        title: plan.title,
        scale: config.scales[plan.id],
        paceCheck: pace,
        roundTrip,
        runs,
        rounds: ROUNDED_WORKLOADS.includes(plan.id) ? rounds : undefined,
      })),
    },
  };
}
