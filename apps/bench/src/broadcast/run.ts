// The broadcast comparison: one message to many people through a fresh sim per run, free (30/s,
// time-scaled) and paid (1000/s, on a bot with paid broadcasts) — telepace against the grammY loop
// a bot author writes, in interleaved rounds — a longer headline telepace run of each, a
// free broadcast while 20 others chat, and telepace alone across kill -9 (a file journal, Redis).

import type { AreaResult } from "../report.js";
import { type Round, roundSummary, runRounds } from "../rounds.js";
import { ScenarioClock } from "../scenario-clock.js";
import type { BenchScope } from "../scope.js";
import { type BroadcastRun, type RunOptions, runOne } from "./broadcast-run.js";
import { type BroadcastConfig, broadcastConfig } from "./config.js";
import { grammyLoop, telepaceContender } from "./contenders.js";
import { runCrash } from "./crash.js";
import { startSimHost } from "./sim-link.js";
import { broadcastTables } from "./tables.js";

const CONTENDERS = [telepaceContender, grammyLoop(false), grammyLoop(true)].map((contender) => ({
  ...contender,
  id: contender.name,
}));

/**
 * Runs every scenario and returns the tables and the figures; the full scope adds the loop with
 * auto-retry to the rounds and to the broadcast while others chat.
 */
export async function runBroadcast(
  config: BroadcastConfig = broadcastConfig(),
  scope: BenchScope = "headline",
): Promise<AreaResult> {
  const started = performance.now();
  // The loop with auto-retry is read by no summary figure that has a target.
  const contenders = scope === "full" ? CONTENDERS : CONTENDERS.slice(0, 2);
  const at = (recipients: number, scale: number, paid: boolean, seed: number): RunOptions => ({
    recipients,
    scale,
    paid,
    paidBroadcasts: paid,
    chatters: 0,
    seed,
    deadlineVsIdeal: config.deadlineVsIdeal,
  });
  const clock = new ScenarioClock();
  const host = await clock.time("simStart", startSimHost);
  try {
    // One short paid run of each contender first, so neither the sim's process nor this one
    // meets its first run cold in the rounds (every run used to start a process of its own).
    await clock.time("warmUp", async () => {
      for (const contender of contenders) {
        await runOne(host, contender, at(config.warmUpRecipients, 1, true, config.seed));
      }
    });
    // Each round: every contender free, then every contender paid, in the round's order.
    const rounds = await clock.time("rounds", () =>
      runRounds(
        contenders,
        { rounds: config.rounds, seed: config.seed },
        async (contender, round: Round) => ({
          free: await runOne(
            host,
            contender,
            at(config.roundFreeRecipients, config.freeScale, false, round.seed),
          ),
          paid: await runOne(host, contender, at(config.roundPaidRecipients, 1, true, round.seed)),
        }),
      ),
    );
    const free = await clock.time("headlineFree", () =>
      runOne(
        host,
        telepaceContender,
        at(config.headlineFreeRecipients, config.headlineFreeScale, false, config.seed),
      ),
    );
    const paid = await clock.time("headlinePaid", () =>
      runOne(host, telepaceContender, at(config.recipients, 1, true, config.seed)),
    );
    const chatting = await clock.time("chatting", async () => {
      const runs: BroadcastRun[] = [];
      for (const contender of contenders) {
        runs.push(
          await runOne(host, contender, {
            ...at(config.chatRecipients, config.freeScale, false, config.seed),
            chatters: config.chatters,
          }),
        );
      }
      return runs;
    });
    // telepace alone, so no deadline: how long the fallback takes is what it measures.
    const refused = await clock.time("refused", () =>
      runOne(host, telepaceContender, {
        ...at(config.refusedRecipients, config.freeScale, true, config.seed),
        paidBroadcasts: false,
        deadlineVsIdeal: Number.POSITIVE_INFINITY,
      }),
    );
    const fileCrash = await clock.time("crash", () =>
      runCrash(host, "file", config.crashRecipients, 1),
    );
    const redisCrash = await clock.time("crash", () =>
      runCrash(host, "redis", config.crashRecipients, config.processes),
    );
    const telepaceChatting = chatting[0] as BroadcastRun;
    const [tp, loop, loopRetry] = CONTENDERS.map(({ id }) => id) as [string, string, string];
    const hasLoopRetry = contenders.some(({ id }) => id === loopRetry);
    const perRound = (kind: "free" | "paid", id: string) =>
      rounds.perRound((result) => result(id)[kind].vsIdeal);
    const summary = {
      ...roundSummary(config.rounds, {
        freeVsIdealRounds: perRound("free", tp),
        paidVsIdealRounds: perRound("paid", tp),
        freeLoopVsIdealRounds: perRound("free", loop),
        paidLoopVsIdealRounds: perRound("paid", loop),
      }),
      ...(hasLoopRetry &&
        roundSummary(config.rounds, {
          freeLoopRetryVsIdealRounds: perRound("free", loopRetry),
          paidLoopRetryVsIdealRounds: perRound("paid", loopRetry),
        })),
      recipients: config.recipients,
      freeRecipients: config.headlineFreeRecipients,
      freeVsIdeal: free.vsIdeal,
      paidVsIdeal: paid.vsIdeal,
      freeVsNominal: free.vsNominal,
      paidVsNominal: paid.vsNominal,
      rateLimited: [
        free,
        paid,
        telepaceChatting,
        ...rounds.of(tp).flatMap((round) => [round.free, round.paid]),
      ].reduce((sum, run) => sum + run.tooManyRequests, 0),
      duplicatesBeyondInFlight: fileCrash.duplicatesBeyondInFlight,
      missedAfterKill: fileCrash.missed,
      processes: redisCrash.processes,
      missedAfterProcessKill: redisCrash.missed,
      othersReplyP99MsDuringBroadcast: telepaceChatting.replyP99Ms,
      freeRequestP50Ms: free.timing.durationP50Ms,
      freeRequestP99Ms: free.timing.durationP99Ms,
      paidRequestP50Ms: paid.timing.durationP50Ms,
      paidRequestP99Ms: paid.timing.durationP99Ms,
    };
    const runs = { config, rounds, free, paid, chatting, refused, fileCrash, redisCrash };
    return {
      area: "broadcast",
      tables: broadcastTables(runs),
      figures: { ...runs, summary, scenarioDurationsMs: clock.durationsMs() },
      durationMs: performance.now() - started,
    };
  } finally {
    await host.close();
  }
}
