// The streaming tables: each contender's medians over the rounds, its staleness p99 as a ratio
// to telepace's taken within each round, and counts summed over the rounds.

import type { Rounds } from "../rounds.js";
import { formatCount, formatRatio, formatSpread, ratio, spread } from "../stats.js";
import type { Table } from "../table.js";
import type { StreamRun } from "./stream-run.js";

/** What {@link streamTable} shows. */
export interface StreamTableInput {
  readonly title: string;
  readonly rounds: Rounds<StreamRun>;
  /** The rows' contender ids, the baseline among them. */
  readonly ids: readonly string[];
  readonly baseline: string;
  readonly deadlineMs: number;
  readonly notes: readonly string[];
}

const ms = (value: number): string => (Number.isFinite(value) ? `${formatCount(value)} ms` : "n/a");

/** One table of runs into one kind of chat under one profile. */
export function streamTable(input: StreamTableInput): Table {
  const { rounds } = input;
  const median = (id: string, figure: (run: StreamRun) => number) =>
    spread(rounds.of(id).map(figure)).median;
  const sum = (id: string, figure: (run: StreamRun) => number) =>
    rounds.of(id).reduce((total, run) => total + figure(run), 0);
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
    ],
    rows: input.ids.map((id) => [
      rounds.of(id)[0]?.contender ?? id,
      formatCount(median(id, (run) => run.apiCalls)),
      formatCount(sum(id, (run) => run.tooManyRequests)),
      ms(median(id, (run) => run.stalenessMs.p50)),
      ms(median(id, (run) => run.stalenessMs.p99)),
      formatSpread(
        spread(
          rounds.perRound((result) =>
            ratio(result(id).stalenessMs.p99, result(input.baseline).stalenessMs.p99),
          ),
        ),
        formatRatio,
      ),
      ms(median(id, (run) => run.finalLatencyMs)),
      formatCount(sum(id, (run) => run.lostFinals)),
      formatCount(median(id, (run) => run.messages)),
      formatCount(median(id, (run) => run.draftFrames)),
    ]),
    notes: [
      "medians over the rounds; 429s and lost finals are summed over them; p99 ÷ telepace is taken within each round (median, lowest–highest round)",
      "staleness = how long the text on screen had lagged the producer (the age of the oldest token not yet shown), sampled every 50 ms of Telegram time while tokens came",
      `final latency = last token → a message holding it; lost = the chat's messages never held every token (deadline ${input.deadlineMs / 1000} s after the last token)`,
      ...input.notes,
    ],
  };
}
