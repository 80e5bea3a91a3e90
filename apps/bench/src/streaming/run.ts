// The streaming comparison: a token stream at 50 Hz for 60 s (Telegram time) into a private chat
// and into a supergroup of a fresh time-scaled sim, once per contender.

import { setMaxListeners } from "node:events";
import { start } from "@telepace/bot-api-sim";
import type { AreaResult } from "../report.js";
import { formatCount, formatFixed, formatRatio, ratio } from "../stats.js";
import type { Table } from "../table.js";
import { analyseStream, type StreamRunFigures } from "./analysis.js";
import {
  grammyStreamPlugin,
  latestOnlyEdits,
  type Streamer,
  type StreamTarget,
  telepaceStreamer,
} from "./streamers.js";
import { produce, tokenPlan } from "./tokens.js";

/** Sizes and timing of the streaming comparison. */
export interface StreamingConfig {
  /** How many times faster than real time the sim (and telepace's clock) run. */
  readonly scale: number;
  readonly tokensPerSecond: number;
  /** Telegram ms of tokens. */
  readonly durationMs: number;
  /** Telegram ms after the last token a contender may take before its final counts as lost. */
  readonly deadlineMs: number;
  readonly seed: number;
}

/** The full-size configuration `pnpm bench streaming` uses. */
export const streamingConfig: StreamingConfig = {
  scale: 2,
  tokensPerSecond: 50,
  durationMs: 60_000,
  deadlineMs: 30_000,
  seed: 16,
};

type Chat = "private" | "group";
type StreamerFactory = (target: StreamTarget) => Streamer;

const CONTENDERS: Readonly<Record<Chat, readonly StreamerFactory[]>> = {
  private: [telepaceStreamer, grammyStreamPlugin, latestOnlyEdits],
  group: [telepaceStreamer, latestOnlyEdits, grammyStreamPlugin],
};

/** One contender's run into one chat. */
export interface StreamRun extends StreamRunFigures {
  readonly contender: string;
  readonly chat: Chat;
  readonly settings: Readonly<Record<string, string | number>>;
  readonly realDurationMs: number;
  readonly hitDeadline: boolean;
}

async function runOne(
  chat: Chat,
  makeStreamer: StreamerFactory,
  config: StreamingConfig,
): Promise<StreamRun> {
  const { scale } = config;
  const sim = await start({ timeScale: scale });
  const controller = new AbortController();
  setMaxListeners(0, controller.signal);
  const startedAt = performance.now();
  try {
    const user = sim.users.create({ firstName: "Reader" });
    const target =
      chat === "private"
        ? sim.chats.createPrivate(user)
        : sim.chats.createSupergroup({ members: [user] });
    const streamer = makeStreamer({
      apiRoot: sim.apiRoot,
      token: sim.token,
      scale,
      signal: controller.signal,
    });
    const plan = tokenPlan(config.tokensPerSecond, config.durationMs, config.seed);
    const producedAt: number[] = [];
    const streaming = streamer.stream(target.id, produce(plan, scale, producedAt));
    const budgetMs = (config.durationMs + config.deadlineMs) / scale;
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<"deadline">((resolve) => {
      timer = setTimeout(() => resolve("deadline"), budgetMs);
    });
    const ending = await Promise.race([streaming.then(() => "done" as const), deadline]);
    clearTimeout(timer);
    // A replaced progress message is deleted just after the final: give that a moment.
    await new Promise((resolve) => setTimeout(resolve, 3000 / scale));
    const events = sim.transcript(target).events;
    const counters = sim.counters();
    controller.abort();
    await streamer.close();
    return {
      contender: streamer.name,
      chat,
      settings: streamer.settings,
      realDurationMs: performance.now() - startedAt,
      hitDeadline: ending === "deadline",
      ...analyseStream(events, counters, producedAt, plan.tokens.length, scale),
    };
  } finally {
    controller.abort();
    await sim.close({ timeoutMs: 500 });
  }
}

function ms(value: number): string {
  return Number.isFinite(value) ? `${formatCount(value)} ms` : "n/a";
}

function chatTable(chat: Chat, runs: readonly StreamRun[], config: StreamingConfig): Table {
  const base = runs[0] as StreamRun;
  return {
    title: `Streaming into a ${chat === "private" ? "private chat" : "supergroup"}: ${config.tokensPerSecond} tokens/s for ${config.durationMs / 1000} s; limits ×${config.scale} faster`,
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
    rows: runs.map((run) => [
      run.contender,
      formatCount(run.apiCalls),
      formatCount(run.tooManyRequests),
      ms(run.stalenessMs.p50),
      ms(run.stalenessMs.p99),
      formatRatio(ratio(run.stalenessMs.p99, base.stalenessMs.p99)),
      ms(run.finalLatencyMs),
      formatCount(run.lostFinals),
      formatCount(run.messages),
      formatCount(run.draftFrames),
    ]),
    notes: [
      "staleness = how long the text on screen had lagged the producer (the age of the oldest token not yet shown), sampled every 50 ms of Telegram time while tokens came",
      `final latency = last token → a message holding it; lost = the chat's messages never held every token (deadline ${formatFixed(config.deadlineMs / 1000, 0)} s after the last token)`,
      "@grammyjs/stream 1.1.0 declares Node >= 22 and throws `Promise.withResolvers is not a function` on Node 20; it ran here with that one function polyfilled. It streams drafts only (private chats): in a group its first draft fails",
    ],
  };
}

/** Runs the streaming comparison. */
export async function runStreaming(config: StreamingConfig = streamingConfig): Promise<AreaResult> {
  const startedAt = performance.now();
  const runs: StreamRun[] = [];
  for (const chat of ["private", "group"] as const) {
    for (const make of CONTENDERS[chat]) runs.push(await runOne(chat, make, config));
  }
  const of = (chat: Chat) => runs.filter((run) => run.chat === chat);
  const ours = (chat: Chat) => of(chat)[0] as StreamRun;
  const peer = of("private").find((run) => run.contender.startsWith("@grammyjs/stream"));
  return {
    area: "streaming",
    tables: [chatTable("private", of("private"), config), chatTable("group", of("group"), config)],
    durationMs: performance.now() - startedAt,
    figures: {
      config,
      summary: {
        privateStalenessP99Ms: ours("private").stalenessMs.p99,
        groupStalenessP99Ms: ours("group").stalenessMs.p99,
        stalenessVsPeer: ratio(
          ours("private").stalenessMs.p99,
          peer?.stalenessMs.p99 ?? Number.NaN,
        ),
        rateLimited: ours("private").tooManyRequests + ours("group").tooManyRequests,
        lostFinals: ours("private").lostFinals + ours("group").lostFinals,
      },
      runs,
    },
  };
}
