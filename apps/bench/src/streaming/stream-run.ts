// One contender's run: a fresh time-scaled sim with the profile's limits and the round trip added
// to every call, the token stream into one chat (and, for a bot's later stream, into a second chat
// a moment later), and the figures read off the transcript.

import { setMaxListeners } from "node:events";
import { type RateLimitOptions, start } from "@telepace/bot-api-sim";
import { analyseStream, type StreamRunFigures } from "./analysis.js";
import { type DraftTiming, recordDrafts } from "./draft-timing.js";
import type { Streamer, StreamTarget } from "./streamers.js";
import { produce, tokenPlan } from "./tokens.js";

/** Where a stream goes. */
export type Chat = "private" | "group";

/** The sim's limits for a run. */
export interface StreamProfile {
  readonly id: "sim-draft-limit" | "documented-limits";
  readonly title: string;
  readonly rateLimits: Partial<RateLimitOptions>;
}

/** The sim as it comes (its draft limit of 5/s, burst 5), and Telegram's documented limits alone. */
export const PROFILES: Readonly<Record<StreamProfile["id"], StreamProfile>> = {
  "sim-draft-limit": {
    id: "sim-draft-limit",
    title: "the sim's draft limit (5/s per chat, burst 5)",
    rateLimits: {},
  },
  "documented-limits": {
    id: "documented-limits",
    title: "documented limits only (no draft limit)",
    rateLimits: { draftsPerSecond: false },
  },
};

/** What one run streams, how fast the sim runs and the round trip it adds. */
export interface StreamRunSpec {
  readonly chat: Chat;
  readonly profile: StreamProfile;
  /** How many times faster than real time the sim (and telepace's clock) run. */
  readonly scale: number;
  readonly tokensPerSecond: number;
  /** Telegram ms of tokens. */
  readonly durationMs: number;
  /** Telegram ms after the last token a contender may take before its final counts as lost. */
  readonly deadlineMs: number;
  /** Telegram ms the sim waits before it handles each call (a round trip to Telegram). */
  readonly roundTripMs: number;
  readonly seed: number;
  /**
   * When set, the same bot streams the same tokens into a second private chat too, starting this
   * many Telegram ms after the first: a bot's later stream, which may start from what the first
   * taught it.
   */
  readonly laterStreamAfterMs?: number | undefined;
}

/** One contender's run into one chat. */
export interface StreamRun extends StreamRunFigures {
  readonly contender: string;
  readonly chat: Chat;
  readonly profile: StreamProfile["id"];
  readonly settings: Readonly<Record<string, string | number>>;
  /** The median of 5 `getMe` calls before the stream, Telegram ms: the round trip as run. */
  readonly roundTripMs: number;
  readonly realDurationMs: number;
  readonly hitDeadline: boolean;
  /** The drafts' timing (a run into one chat; NaN figures for a run with a later stream). */
  readonly drafts: DraftTiming;
  /** The second chat's figures, for a run with a later stream (its counts are the bot's). */
  readonly later?: StreamRunFigures | undefined;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const NO_TIMING: DraftTiming = Object.freeze({
  turnaroundMs: Number.NaN,
  floorShare: Number.NaN,
  cpuMsPerFrame: Number.NaN,
});

/** Times `getMe` 5 times (real ms) and returns the median. */
async function measureRoundTrip(apiRoot: string, token: string): Promise<number> {
  const times: number[] = [];
  for (let index = 0; index < 5; index++) {
    const startedAt = performance.now();
    const response = await fetch(`${apiRoot}/bot${token}/getMe`);
    await response.arrayBuffer();
    times.push(performance.now() - startedAt);
  }
  return times.sort((a, b) => a - b)[2] as number;
}

/** Runs one contender (made fresh for the run) and reads its figures. */
export async function runStream(
  spec: StreamRunSpec,
  makeStreamer: (target: StreamTarget) => Streamer,
): Promise<StreamRun> {
  const { scale } = spec;
  const sim = await start({ timeScale: scale, rateLimits: spec.profile.rateLimits });
  const controller = new AbortController();
  setMaxListeners(0, controller.signal);
  try {
    sim.faults.setLatency(spec.roundTripMs / scale);
    const user = sim.users.create({ firstName: "Reader" });
    const target =
      spec.chat === "private"
        ? sim.chats.createPrivate(user)
        : sim.chats.createSupergroup({ members: [user] });
    const laterAfterMs = spec.laterStreamAfterMs;
    const second =
      laterAfterMs === undefined
        ? undefined
        : sim.chats.createPrivate(sim.users.create({ firstName: "Second" }));
    const roundTripMs = (await measureRoundTrip(sim.apiRoot, sim.token)) * scale;
    const streamer = makeStreamer({
      apiRoot: sim.apiRoot,
      token: sim.token,
      scale,
      signal: controller.signal,
    });
    const plan = tokenPlan(spec.tokensPerSecond, spec.durationMs, spec.seed);
    const producedAt: number[] = [];
    const laterProducedAt: number[] = [];
    const drafts = second === undefined ? recordDrafts() : undefined;
    const startedAt = performance.now();
    const streaming = Promise.all([
      streamer.stream(target.id, produce(plan, scale, producedAt)),
      second === undefined
        ? undefined
        : sleep((laterAfterMs as number) / scale).then(() =>
            streamer.stream(second.id, produce(plan, scale, laterProducedAt)),
          ),
    ]);
    let timer: NodeJS.Timeout | undefined;
    const lastTokenMs = spec.durationMs + (laterAfterMs ?? 0);
    const deadline = new Promise<"deadline">((resolve) => {
      timer = setTimeout(() => resolve("deadline"), (lastTokenMs + spec.deadlineMs) / scale);
    });
    const ending = await Promise.race([streaming.then(() => "done" as const), deadline]);
    clearTimeout(timer);
    if (ending === "deadline") controller.abort();
    // What a contender still sends after its stream ended (telepace deletes a replaced progress
    // message once the final arrived) is answered before the transcript is read.
    await streamer.close();
    const events = sim.transcript(target).events;
    const counters = sim.counters();
    controller.abort();
    const first = analyseStream(events, counters, producedAt, plan.tokens.length, scale);
    const later =
      second === undefined
        ? undefined
        : analyseStream(
            sim.transcript(second).events,
            counters,
            laterProducedAt,
            plan.tokens.length,
            scale,
          );
    return {
      contender: streamer.name,
      chat: spec.chat,
      profile: spec.profile.id,
      settings: streamer.settings,
      roundTripMs,
      realDurationMs: performance.now() - startedAt,
      hitDeadline: ending === "deadline",
      ...first,
      lostFinals: first.lostFinals + (later?.lostFinals ?? 0),
      drafts: drafts?.stop(first.draftFrames, scale, streamer.draftFloorMs) ?? NO_TIMING,
      ...(later === undefined ? {} : { later }),
    };
  } finally {
    controller.abort();
    await sim.close({ timeoutMs: 500 });
  }
}
