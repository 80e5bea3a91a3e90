// The streaming comparison: a token stream at 50 Hz into a private chat (under the sim's draft
// limit, where the bot's later stream into a second chat follows, and under Telegram's documented
// limits only) and into a supergroup, each run on a fresh time-scaled sim with a round trip, in
// interleaved rounds; the by-hand rows, which no summary figure reads, once on round 0's tokens.
// The area runs on Node 24 (node24.ts).

import type { AreaResult } from "../report.js";
import { roundSummary, runRounds } from "../rounds.js";
import { ScenarioClock } from "../scenario-clock.js";
import { ratio, spread } from "../stats.js";
import { findNode24, node24Cache, nodeMajor, runInChild } from "./node24.js";
import { PROFILES, runStream, type StreamProfile, type StreamRun } from "./stream-run.js";
import {
  grammyStreamPlugin,
  latestOnlyEdits,
  type Streamer,
  type StreamTarget,
  telepaceStreamer,
} from "./streamers.js";
import { streamTable } from "./tables.js";

/** How one kind of chat is streamed into. */
export interface ChatConfig {
  /** How many times faster than real time the sim (and telepace's clock) run. */
  readonly scale: number;
  /** Telegram ms of tokens. */
  readonly durationMs: number;
}

/** Sizes and timing of the streaming comparison. */
export interface StreamingConfig {
  readonly rounds: number;
  readonly seed: number;
  readonly tokensPerSecond: number;
  /** Telegram ms the sim adds to every call: the round trip to Telegram. */
  readonly roundTripMs: number;
  /** Telegram ms after the last token a contender may take before its final counts as lost. */
  readonly deadlineMs: number;
  /** Under the sim's draft limit: Telegram ms after the first stream that the bot's second starts. */
  readonly laterStreamAfterMs: number;
  /**
   * Telegram ms of tokens in each case's unmeasured warm-up run before the rounds, so no case meets
   * the process cold in round 0; 0 for none.
   */
  readonly warmUpMs: number;
  readonly private: ChatConfig;
  readonly group: ChatConfig;
}

/** The full-size configuration `pnpm bench streaming` uses. */
export const streamingConfig: StreamingConfig = {
  rounds: 5,
  seed: 16,
  tokensPerSecond: 50,
  roundTripMs: 30,
  deadlineMs: 30_000,
  laterStreamAfterMs: 1_000,
  warmUpMs: 3_000,
  // 16 s of tokens pass 4096 characters once; ×10 keeps the added round trip (3 real ms) well
  // above loopback's own (about 0.5 ms: 35–37 ms as measured).
  private: { scale: 10, durationMs: 16_000 },
  // A group's pace is a minute's 20 messages: 60 s, where a real ms (40 Telegram ms) is about 1%
  // of the 3 s between messages at ×40.
  group: { scale: 40, durationMs: 60_000 },
};

type Make = (target: StreamTarget) => Streamer;

/** One contender into one chat under one profile: the unit the rounds interleave. */
export interface Case {
  readonly id: string;
  readonly chat: "private" | "group";
  readonly profile: StreamProfile;
  readonly make: Make;
}

const TELEPACE = "telepace";
const PEER = "grammy-stream";
const BY_HAND = "latest-only";

/** Every case of the comparison, the peer's when it can run. */
export function cases(withPeer: boolean): Case[] {
  const contenders: [string, Make][] = [
    [TELEPACE, telepaceStreamer],
    ...(withPeer ? ([[PEER, grammyStreamPlugin]] as [string, Make][]) : []),
  ];
  const documented = PROFILES["documented-limits"];
  const all: Case[] = [];
  for (const profile of Object.values(PROFILES)) {
    for (const [name, make] of contenders) {
      all.push({ id: `private/${profile.id}/${name}`, chat: "private", profile, make });
    }
  }
  // Edits meet the same limits under both profiles: one run each, under the documented ones.
  all.push({
    id: `private/${documented.id}/${BY_HAND}`,
    chat: "private",
    profile: documented,
    make: latestOnlyEdits,
  });
  for (const [name, make] of [...contenders, [BY_HAND, latestOnlyEdits] as [string, Make]]) {
    all.push({ id: `group/${documented.id}/${name}`, chat: "group", profile: documented, make });
  }
  return all;
}

/**
 * Whether a summary figure reads the case, so it runs in every round: telepace's and the peer's.
 * The latest-only edits by hand are a table's row only and run once, on round 0's tokens.
 */
export function readBySummary(one: Case): boolean {
  return !one.id.endsWith(`/${BY_HAND}`);
}

/**
 * Runs the comparison in this process. `peerMissing` says why `@grammyjs/stream` cannot run here
 * (it is then left out); otherwise it runs beside the others.
 */
export async function runStreamingHere(
  config: StreamingConfig,
  peerMissing = "",
): Promise<AreaResult> {
  const startedAt = performance.now();
  const all = cases(peerMissing === "");
  const clock = new ScenarioClock();
  const run = (one: Case, seed: number, durationMs = config[one.chat].durationMs) =>
    runStream(
      {
        chat: one.chat,
        profile: one.profile,
        ...config[one.chat],
        durationMs,
        tokensPerSecond: config.tokensPerSecond,
        deadlineMs: config.deadlineMs,
        roundTripMs: config.roundTripMs,
        seed,
        laterStreamAfterMs:
          one.chat === "private" && one.profile.id === "sim-draft-limit"
            ? config.laterStreamAfterMs
            : undefined,
      },
      one.make,
    );
  // The process's first run met it cold (JIT, first sim): round 0's first case, whichever it
  // was, came out seconds staler than its other rounds, most at the group's ×40.
  await clock.time("warmUp", async () => {
    if (config.warmUpMs <= 0) return;
    for (const one of all) await run(one, config.seed - 1, config.warmUpMs);
  });
  const rounds = await clock.time("rounds", () =>
    runRounds(
      all.filter(readBySummary),
      { rounds: config.rounds, seed: config.seed },
      (one, round) => run(one, round.seed),
    ),
  );
  const once = new Map<string, StreamRun>();
  const roundZeroSeed = rounds.rounds[0]?.seed ?? config.seed;
  await clock.time("once", async () => {
    for (const one of all.filter((candidate) => !readBySummary(candidate))) {
      once.set(one.id, await run(one, roundZeroSeed));
    }
  });
  const id = (chat: string, profile: StreamProfile["id"], name: string) =>
    `${chat}/${profile}/${name}`;
  const sim = PROFILES["sim-draft-limit"].id;
  const doc = PROFILES["documented-limits"].id;
  const p99 = (run: StreamRun) => run.stalenessMs.p99;
  const perRound = (figure: (result: (id: string) => StreamRun) => number) =>
    rounds.perRound(figure);
  const peerRatio = (profile: StreamProfile["id"], figure = p99) =>
    perRound((r) =>
      peerMissing === ""
        ? ratio(
            figure(r(id("private", profile, TELEPACE))),
            figure(r(id("private", profile, PEER))),
          )
        : Number.NaN,
    );
  const laterP99 = (run: StreamRun) => run.later?.stalenessMs.p99 ?? Number.NaN;
  const ourDoc = (figure: (run: StreamRun) => number) =>
    perRound((r) => figure(r(id("private", doc, TELEPACE))));
  const groupIdealMs = (run: StreamRun) => 60_000 / 20 + run.roundTripMs;
  // 429s of telepace's private run under `profile` and of its group run.
  const limited = (profile: StreamProfile["id"]) =>
    perRound(
      (r) =>
        r(id("private", profile, TELEPACE)).tooManyRequests +
        r(id("group", doc, TELEPACE)).tooManyRequests,
    );
  const ours = all.filter((one) => one.id.endsWith(`/${TELEPACE}`)).map((one) => one.id);
  const rounded = all.filter(readBySummary);
  const summary = roundSummary(config.rounds, {
    privateStalenessP99Ms: perRound((r) => p99(r(id("private", sim, TELEPACE)))),
    privateStalenessP99MsLaterStream: perRound((r) => laterP99(r(id("private", sim, TELEPACE)))),
    stalenessVsPeerLaterStream: peerRatio(sim, laterP99),
    groupStalenessP99Ms: perRound((r) => p99(r(id("group", doc, TELEPACE)))),
    stalenessVsPeer: peerRatio(sim),
    rateLimited: limited(sim),
    privateStalenessP99MsDocumentedLimits: perRound((r) => p99(r(id("private", doc, TELEPACE)))),
    stalenessVsPeerDocumentedLimits: peerRatio(doc),
    draftFramesVsPeerDocumentedLimits: peerRatio(doc, (run) => run.draftFrames),
    draftTurnaroundMsDocumentedLimits: ourDoc((run) => run.drafts.turnaroundMs),
    peerDraftTurnaroundMsDocumentedLimits: perRound((r) =>
      peerMissing === "" ? r(id("private", doc, PEER)).drafts.turnaroundMs : Number.NaN,
    ),
    draftFloorShareDocumentedLimits: ourDoc((run) => run.drafts.floorShare),
    cpuPerFrameVsPeerDocumentedLimits: peerRatio(doc, (run) => run.drafts.cpuMsPerFrame),
    rateLimitedDocumentedLimits: limited(doc),
    groupStalenessVsIdeal: perRound((r) => {
      const group = r(id("group", doc, TELEPACE));
      return ratio(p99(group), groupIdealMs(group));
    }),
    lostFinals: perRound((r) => ours.reduce((sum, one) => sum + r(one).lostFinals, 0)),
    roundTripMs: perRound((r) => r(id("private", doc, TELEPACE)).roundTripMs),
  });
  const node = `Node ${process.versions.node}`;
  const notes = [
    `every contender and the sim ran on ${node}${peerMissing === "" ? "" : `; @grammyjs/stream did not run: ${peerMissing}`}`,
    `round trip as run (getMe before each run, Telegram ms): ${spreadText(rounds, rounded, (run) => run.roundTripMs)}; the sim adds ${config.roundTripMs} ms to every call`,
  ];
  const table = (chat: "private" | "group", profile: StreamProfile) =>
    streamTable({
      title: `Streaming into a ${chat === "private" ? "private chat" : "supergroup"}, ${profile.title}: ${config.tokensPerSecond} tokens/s for ${config[chat].durationMs / 1000} s; limits ×${config[chat].scale} faster; ${config.rounds} rounds, medians`,
      rounds,
      once,
      ids: all.filter((one) => one.chat === chat && one.profile === profile).map((one) => one.id),
      baseline: id(chat, profile.id, TELEPACE),
      deadlineMs: config.deadlineMs,
      laterStream:
        chat === "private" && profile.id === sim
          ? { afterMs: config.laterStreamAfterMs }
          : undefined,
      draftTiming: chat === "private" && profile.id === doc,
      notes:
        chat === "group"
          ? [...notes, "@grammyjs/stream streams drafts only: in a group its first draft fails"]
          : notes,
    });
  return {
    area: "streaming",
    tables: [
      table("private", PROFILES["documented-limits"]),
      table("private", PROFILES["sim-draft-limit"]),
      table("group", PROFILES["documented-limits"]),
    ],
    durationMs: performance.now() - startedAt,
    figures: {
      config,
      node: process.versions.node,
      peerMissing,
      summary,
      rounds,
      once: Object.fromEntries(once),
      scenarioDurationsMs: clock.durationsMs(),
    },
  };
}

function spreadText(
  rounds: { of(id: string): StreamRun[] },
  all: readonly Case[],
  figure: (run: StreamRun) => number,
): string {
  const { median, min, max } = spread(
    all.filter((one) => one.chat === "private").flatMap((one) => rounds.of(one.id).map(figure)),
  );
  return `${median.toFixed(1)} (${min.toFixed(1)}–${max.toFixed(1)})`;
}

/**
 * Runs the streaming comparison on Node 24: here when this process is on Node >= 22, else in a
 * child on the Node 24 `.ci/run` fetches. Without one, it runs here and leaves the peer out.
 */
export async function runStreaming(config: StreamingConfig = streamingConfig): Promise<AreaResult> {
  if (nodeMajor() >= 22) return runStreamingHere(config);
  const node24 = findNode24();
  if (node24 === undefined) {
    const why = `it needs Node >= 22 (Promise.withResolvers) and no Node 24 was found in ${node24Cache()}/node-24.* (bash .ci/run installs it) or TELEPACE_NODE24`;
    console.warn(`streaming: @grammyjs/stream is left out: ${why}`);
    return runStreamingHere(config, why);
  }
  const text = await runInChild<string>(node24, config);
  return JSON.parse(text) as AreaResult;
}
