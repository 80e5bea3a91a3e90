// Long polling against the sim at the end-to-end round trip (+2 ms): the intake at 64 against
// the runner at 64 and at its default. These are the round-trip sweep's runs at that round trip,
// read a second way (from each contender's start, with the slot ceiling of what it finished),
// rather than a backlog drained again by runs of their own: medians of the sweep's rounds.

import { roundSummary } from "../rounds.js";
import { formatCount, formatFixed, formatSpread, ratio, spread } from "../stats.js";
import type { Table } from "../table.js";
import {
  backlogCountAt,
  type RoundTripResult,
  type RoundTripSweepConfig,
  type SweepRun,
} from "./round-trip-sweep.js";

/** The sweep's contenders these figures compare, the intake first. */
const ROWS = [
  { id: "intake-64", confirms: "after storing" },
  { id: "runner-64", confirms: "on fetch" },
  { id: "runner-default", confirms: "on fetch" },
] as const;

/** The polling figures of the dispatch summary, with their spread over the sweep's rounds. */
export interface PollingFigures {
  readonly table: Table;
  readonly summary: Readonly<Record<string, number>>;
}

const violations = (run: SweepRun): number =>
  run.outOfOrderStarts + run.overlappingStarts + run.duplicateStarts;

/**
 * The polling table and summary fields from the sweep's runs at `result.roundTripMs`:
 * `pollingVsRunner` (the intake's rate since its start ÷ the runner's, both at 64, per round),
 * `pollingVsSlotCeiling`, `pollingCeilingVsRunner` and `fetchesPerUpdate` (the intake's), each
 * the median of the rounds with `…Min`/`…Max`.
 */
export function pollingFigures(
  config: RoundTripSweepConfig,
  result: RoundTripResult,
): PollingFigures {
  const { rounds } = result;
  const count = rounds.rounds.length;
  const intake = (run: (id: string) => SweepRun) => run("intake-64");
  const summary = roundSummary(count, {
    pollingVsRunner: rounds.perRound((run) =>
      ratio(intake(run).sinceStartUpdatesPerSecond, run("runner-64").sinceStartUpdatesPerSecond),
    ),
    pollingVsSlotCeiling: rounds.perRound((run) =>
      ratio(intake(run).sinceStartUpdatesPerSecond, intake(run).slotCeilingPerSecond),
    ),
    pollingCeilingVsRunner: rounds.perRound((run) =>
      ratio(intake(run).slotCeilingPerSecond, run("runner-64").sinceStartUpdatesPerSecond),
    ),
    fetchesPerUpdate: rounds.perRound((run) => intake(run).fetchesPerUpdate),
  });
  const { rounds: _rounds, ...figures } = summary;
  const median = (values: readonly number[]): number => spread(values).median;
  const measured = ROWS.flatMap(({ id }) => rounds.of(id).map((run) => run.measuredGetUpdatesMs));
  const { backlog } = config;
  const base = rounds.of("intake-64");
  return {
    summary: figures,
    table: {
      title: `Dispatch, long polling against the simulator: a backlog of ${formatCount(backlogCountAt(config, result.roundTripMs))} updates over ${formatCount(backlog.principals)} private chats (Zipf ${backlog.skew}), I/O ${backlog.ioMs[0]}–${backlog.ioMs[1]} ms, +${result.roundTripMs} ms per call (getUpdates of 100 measured ${formatFixed(median(measured), 1)} ms); the round-trip sweep's runs there, from each start to ${formatCount(config.warmUpMs + config.windowMs)} ms, median of ${count} rounds (min–max)`,
      columns: [
        { header: "contender", align: "left" },
        { header: "confirms", align: "left" },
        { header: "updates/s vs telepace" },
        { header: "of slot ceiling" },
        { header: "fetches/update" },
        { header: "getUpdates calls" },
        { header: "peak held" },
        { header: "order violations" },
      ],
      rows: ROWS.map(({ id, confirms }) => {
        const runs = rounds.of(id);
        const vsTelepace = runs.map((run, index) =>
          ratio(
            run.sinceStartUpdatesPerSecond,
            (base[index] as SweepRun).sinceStartUpdatesPerSecond,
          ),
        );
        return [
          (runs[0] as SweepRun).contender,
          confirms,
          formatSpread(spread(vsTelepace), (value) => formatFixed(value, 2)),
          formatFixed(
            median(
              runs.map((run) => ratio(run.sinceStartUpdatesPerSecond, run.slotCeilingPerSecond)),
            ),
            2,
          ),
          formatFixed(median(runs.map((run) => run.fetchesPerUpdate)), 2),
          formatCount(median(runs.map((run) => run.getUpdatesCalls))),
          formatCount(median(runs.map((run) => run.peakHeld))),
          formatCount(runs.reduce((sum, run) => sum + violations(run), 0)),
        ];
      }),
      notes: [
        `updates/s = updates finished from the contender's start to the window's close ÷ that time (the start, its first fetches, included; no backlog's tail); telepace drained ${formatCount(median(base.map((run) => run.sinceStartUpdatesPerSecond)))} updates/s`,
        "both sides run the same grammY Bot (HTTP client, bot.handleUpdate); fetches/update = updates its getUpdates calls returned ÷ the distinct ones (1 = each fetched once)",
        "of slot ceiling = updates/s ÷ the most any dispatcher with that row's slots could have finished in that time, one update at a time per chat: updates ÷ max(total slot hold ÷ slots, the busiest chat's total hold), from how long each update held its slot in that run (I/O plus timer lateness)",
        "confirms: the intake confirms an offset once the batch is stored in its journal (at-least-once with a durable journal); the runner's fetcher confirms on fetch, before processing",
      ],
    },
  };
}
