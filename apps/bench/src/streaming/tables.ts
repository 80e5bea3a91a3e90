// The streaming tables: each contender's medians over the rounds, its staleness p99 as a ratio
// to telepace's taken within each round, and counts summed over the rounds; a row that ran once
// (on round 0's tokens) shows that run, its ratio taken against round 0's telepace.

import type { Rounds } from "../rounds.js";
import { formatCount, formatRatio, formatSpread, ratio, spread } from "../stats.js";
import type { Table } from "../table.js";
import type { StreamRun } from "./stream-run.js";

/** What {@link streamTable} shows. */
export interface StreamTableInput {
  readonly title: string;
  readonly rounds: Rounds<StreamRun>;
  /** Rows that ran once, on round 0's tokens, by contender id (none ran in the rounds). */
  readonly once?: ReadonlyMap<string, StreamRun> | undefined;
  /** The rows' contender ids, the baseline among them. */
  readonly ids: readonly string[];
  readonly baseline: string;
  readonly deadlineMs: number;
  /** Runs with the bot's later stream into a second chat, which starts `afterMs` later. */
  readonly laterStream?: { readonly afterMs: number } | undefined;
  /** Show the drafts' timing: answer → next draft, the floor's share, CPU per frame. */
  readonly draftTiming?: boolean | undefined;
  readonly notes: readonly string[];
}

const ms = (value: number): string => (Number.isFinite(value) ? `${formatCount(value)} ms` : "n/a");
const fixed = (value: number, unit: string): string =>
  Number.isFinite(value) ? `${value.toFixed(1)}${unit}` : "n/a";

/** One table of runs into one kind of chat under one profile. */
export function streamTable(input: StreamTableInput): Table {
  const { rounds } = input;
  const onceRun = (id: string) => input.once?.get(id);
  const runsOf = (id: string): StreamRun[] => {
    const run = onceRun(id);
    return run === undefined ? rounds.of(id) : [run];
  };
  const median = (id: string, figure: (run: StreamRun) => number) =>
    spread(runsOf(id).map(figure)).median;
  const sum = (id: string, figure: (run: StreamRun) => number) =>
    runsOf(id).reduce((total, run) => total + figure(run), 0);
  const vsBaseline = (id: string, figure: (run: StreamRun) => number) => {
    const run = onceRun(id);
    if (run !== undefined) {
      return formatRatio(ratio(figure(run), figure(rounds.get(0, input.baseline))));
    }
    return formatSpread(
      spread(
        rounds.perRound((result) => ratio(figure(result(id)), figure(result(input.baseline)))),
      ),
      formatRatio,
    );
  };
  const hasOnce = input.ids.some((id) => onceRun(id) !== undefined);
  const laterP99 = (run: StreamRun) => run.later?.stalenessMs.p99 ?? Number.NaN;
  const later = input.laterStream;
  const timing = input.draftTiming === true;
  return {
    title: input.title,
    columns: [
      { header: "contender", align: "left" },
      { header: "API calls" },
      { header: "429s" },
      { header: "staleness p50" },
      { header: "staleness p99" },
      { header: "p99 ÷ telepace" },
      { header: "final latency" },
      { header: "lost finals" },
      { header: "messages sent" },
      { header: "draft frames" },
      ...(later === undefined
        ? []
        : [{ header: "2nd chat staleness p99" }, { header: "2nd chat p99 ÷ telepace" }]),
      ...(timing
        ? [
            { header: "answer → next draft" },
            { header: "floor's share" },
            { header: "CPU / frame" },
          ]
        : []),
    ],
    rows: input.ids.map((id) => [
      runsOf(id)[0]?.contender ?? id,
      formatCount(median(id, (run) => run.apiCalls)),
      formatCount(sum(id, (run) => run.tooManyRequests)),
      ms(median(id, (run) => run.stalenessMs.p50)),
      ms(median(id, (run) => run.stalenessMs.p99)),
      vsBaseline(id, (run) => run.stalenessMs.p99),
      ms(median(id, (run) => run.finalLatencyMs)),
      formatCount(sum(id, (run) => run.lostFinals)),
      formatCount(median(id, (run) => run.messages)),
      formatCount(median(id, (run) => run.draftFrames)),
      ...(later === undefined ? [] : [ms(median(id, laterP99)), vsBaseline(id, laterP99)]),
      ...(timing
        ? [
            ms(median(id, (run) => run.drafts.turnaroundMs)),
            fixed(
              median(id, (run) => run.drafts.floorShare * 100),
              "%",
            ),
            fixed(
              median(id, (run) => run.drafts.cpuMsPerFrame),
              " ms",
            ),
          ]
        : []),
    ]),
    notes: [
      "medians over the rounds; 429s and lost finals are summed over them; p99 ÷ telepace is taken within each round (median, lowest–highest round)",
      ...(hasOnce
        ? [
            "latest-only edits by hand, which no summary figure reads, ran once, on round 0's tokens: their row is that run, its p99 ÷ round 0's telepace",
          ]
        : []),
      "staleness = how long the text on screen had lagged the producer (the age of the oldest token not yet shown), sampled every 50 ms of Telegram time while tokens came",
      `final latency = last token → a message holding it; lost = the chat's messages never held every token (deadline ${input.deadlineMs / 1000} s after the last token)`,
      ...(later === undefined
        ? []
        : [
            `each run: the same bot streams the same tokens into a second private chat ${later.afterMs / 1000} s after the first ("2nd chat"); API calls, 429s and messages count both chats, the other columns the first`,
          ]),
      ...(timing
        ? [
            "answer → next draft = median time (Telegram ms) from a draft's answer leaving the sim to the next draft reaching it: the sender's own share of each frame; floor's share = the part of those gaps before telepace's 34 ms floor (from one draft's start to the next's) let the next draft go; CPU / frame = the whole process's CPU (real ms, the sim's included) over the run ÷ draft frames",
          ]
        : []),
      ...input.notes,
    ],
  };
}
