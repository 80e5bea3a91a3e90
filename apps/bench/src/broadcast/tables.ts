// The broadcast area's tables: the rounds (medians), the headline telepace runs with their
// request timing, the broadcast while others chat, the refused paid broadcast and the crashes.

import type { Rounds } from "../rounds.js";
import { formatCount, formatFixed, formatSpread, spread } from "../stats.js";
import type { Table } from "../table.js";
import type { BroadcastRun } from "./broadcast-run.js";
import type { BroadcastConfig } from "./config.js";
import type { CrashRun } from "./crash.js";

/** What the area measured, for its tables. */
export interface BroadcastResults {
  readonly config: BroadcastConfig;
  readonly rounds: Rounds<{ readonly free: BroadcastRun; readonly paid: BroadcastRun }>;
  readonly free: BroadcastRun;
  readonly paid: BroadcastRun;
  readonly chatting: readonly BroadcastRun[];
  readonly refused: BroadcastRun;
  readonly fileCrash: CrashRun;
  readonly redisCrash: CrashRun;
}

const seconds = (ms: number) => `${formatFixed(ms / 1000, 1)} s`;
const ms = (value: number) => `${formatCount(value)} ms`;
/** `>` marks a run cut at its deadline: its pace so far, a lower bound of its full run. */
const vsIdeal = (run: BroadcastRun) => `${run.cut ? ">" : ""}${formatFixed(run.vsIdeal, 3)}`;
const sum = (values: readonly number[]) => values.reduce((total, value) => total + value, 0);

function roundsTable(results: BroadcastResults, kind: "free" | "paid"): Table {
  const { config, rounds } = results;
  const first = rounds.get(0, rounds.rounds[0]?.order[0] as string)[kind];
  const ids = rounds.rounds[0]?.order.slice().sort() ?? [];
  return {
    title: `${kind === "free" ? "Free" : "Paid"} broadcast to ${formatCount(first.recipients)} people (×${first.scale}), ${config.rounds} rounds`,
    columns: [
      { header: "contender", align: "left" },
      { header: "÷ ideal, median (min–max)" },
      { header: "cut at the deadline" },
      { header: "429s" },
      { header: "missed" },
      { header: "twice" },
      { header: "request p50" },
      { header: "p99" },
    ],
    rows: ids.map((id) => {
      const runs = rounds.of(id).map((round) => round[kind]);
      const cut = runs.filter((run) => run.cut).length;
      return [
        id,
        `${cut > 0 ? ">" : ""}${formatSpread(spread(runs.map((run) => run.vsIdeal)), (v) => formatFixed(v, 3))}`,
        `${cut} of ${runs.length}`,
        formatCount(sum(runs.map((run) => run.tooManyRequests))),
        formatCount(
          sum(runs.map((run) => run.missed - (run.cut ? run.recipients - run.settled : 0))),
        ),
        formatCount(sum(runs.map((run) => run.duplicates))),
        ms(spread(runs.map((run) => run.timing.durationP50Ms)).median),
        ms(spread(runs.map((run) => run.timing.durationP99Ms)).median),
      ];
    }),
    notes: [
      `÷ ideal: time to reach everyone ÷ the fastest the limits allow (${kind === "free" ? "30 at once, then 30/s" : "1000 at once, then 1000/s"}).`,
      `Every run stops at ${config.deadlineVsIdeal}× recipients ÷ the pace, or once the limits' fastest (the burst, then`,
      `the pace) could no longer reach the rest by then; ">": a run cut, its figure the documented`,
      "pace ÷ its pace over what it sent (a lower bound: a loop of awaits does not speed up).",
      "Missed: recipients without a message among those it reached before the deadline.",
      "Request: from its start to its answer, Telegram ms, median over the rounds.",
    ],
  };
}

function headlineTable(results: BroadcastResults): Table {
  const runs = [results.free, results.paid, ...results.chatting.slice(0, 1), results.refused];
  const names = ["free", "paid", "free, 20 others chat", "paid on a bot without them"];
  return {
    title: "telepace's headline runs and their requests",
    columns: [
      { header: "run", align: "left" },
      { header: "recipients" },
      { header: "scale" },
      { header: "time to reach all" },
      { header: "÷ ideal" },
      { header: "429s" },
      { header: "request p50 / p99 real" },
      { header: "Telegram" },
      { header: "start → stored p99 / max" },
      { header: "over 100 ms" },
      { header: "mode" },
    ],
    rows: runs.map((run, index) => [
      names[index] as string,
      formatCount(run.recipients),
      `×${run.scale}`,
      seconds(run.elapsedMs),
      vsIdeal(run),
      formatCount(run.tooManyRequests),
      `${formatFixed(run.timing.durationP50RealMs, 1)} / ${formatFixed(run.timing.durationP99RealMs, 1)} ms`,
      `${formatCount(run.timing.durationP50Ms)} / ${formatCount(run.timing.durationP99Ms)} ms`,
      `${formatCount(run.timing.delayP99Ms)} / ${formatCount(run.timing.delayMaxMs)} ms`,
      formatCount(run.timing.delaysOverMarginCap),
      run.mode,
    ]),
    notes: [
      "Request: the outbox's start (the broadcast's durable write, then the HTTP call) to its answer.",
      "start → stored: from that start to the sim storing the message, Telegram ms; over 100 ms:",
      "requests whose delay exceeded the most the outbox widens its second by (pacingMarginMs).",
      "A paid broadcast on a bot without them: its first 429 is the refusal, the rest goes free.",
    ],
  };
}

function chattingTable(results: BroadcastResults): Table {
  const [base] = results.chatting as [BroadcastRun];
  return {
    title: `Free broadcast to ${formatCount(base.recipients)} people while ${results.config.chatters} others chat (×${base.scale})`,
    columns: [
      { header: "contender", align: "left" },
      { header: "÷ ideal" },
      { header: "429s" },
      { header: "others' reply p50" },
      { header: "p99" },
      { header: "unanswered" },
    ],
    rows: results.chatting.map((run) => [
      run.contender,
      vsIdeal(run),
      formatCount(run.tooManyRequests),
      ms(run.replyP50Ms),
      ms(run.replyP99Ms),
      formatCount(run.unanswered),
    ]),
    notes: [
      `Each chatter writes every 2–6 s; the bot answers "pong" through the same client, so the`,
      "replies (about 5 a second) take their share of the 30/s and the broadcast the rest.",
      "Reply latency: the sim storing a chatter's message to it storing the reply, Telegram ms.",
    ],
  };
}

function crashTable(file: CrashRun, redis: CrashRun): Table {
  const rows: [string, CrashRun][] = [
    ["1 process, file journal, restarted", file],
    [`${redis.processes} processes on Redis, 1 killed`, redis],
  ];
  return {
    title: "Broadcast across kill -9 (paid, real time; telepace)",
    columns: [
      { header: "run", align: "left" },
      { header: "recipients" },
      { header: "sent at the kill" },
      { header: "in flight at the kill" },
      { header: "sent again" },
      { header: "missed" },
      { header: "twice" },
      { header: "twice, not reported" },
      { header: "429s" },
    ],
    rows: rows.map(([name, crash]) => [
      name,
      formatCount(crash.recipients),
      formatCount(crash.sentAtKill),
      formatCount(crash.inFlightAtKill),
      formatCount(crash.resent),
      formatCount(crash.missed),
      formatCount(crash.duplicates),
      formatCount(crash.duplicatesBeyondInFlight),
      formatCount(crash.tooManyRequests),
    ]),
    notes: [
      "In flight at the kill: positions the store held as started with no outcome (Redis: those a",
      "taker found so and sent again). Twice, not reported: recipients with two messages that no",
      "process reported as sent again after a crash (the target is 0).",
    ],
  };
}

/** Every table of the area, in the order they print. */
export function broadcastTables(results: BroadcastResults): Table[] {
  return [
    roundsTable(results, "free"),
    roundsTable(results, "paid"),
    headlineTable(results),
    chattingTable(results),
    crashTable(results.fileCrash, results.redisCrash),
  ];
}
