// Request timing of a broadcast run: when each request started and ended on the client, when the
// sim stored it, and what that says about the 429s — whether the sender's starts broke the 30 a
// second, or a request reached the sim later after its start than the pacer's margin allows for.

import { summarize } from "../stats.js";

/** One request as the client saw it, in epoch ms (real time, comparable across processes). */
export interface RequestTiming {
  readonly chatId: number;
  readonly startedAt: number;
  readonly endedAt: number;
}

/** Collects request timings; `now()` reads epoch ms with sub-ms precision. */
export class RequestLog {
  readonly requests: RequestTiming[] = [];
  readonly #open = new Map<number, number>();

  static now(): number {
    return performance.timeOrigin + performance.now();
  }

  start(chatId: number): void {
    this.#open.set(chatId, RequestLog.now());
  }

  end(chatId: number): void {
    const startedAt = this.#open.get(chatId);
    if (startedAt === undefined) return;
    this.#open.delete(chatId);
    this.requests.push({ chatId, startedAt, endedAt: RequestLog.now() });
  }
}

/** A 429 the sim issued, and its first stored message per chat, in epoch ms. */
export interface SimTiming {
  readonly rateLimited: readonly {
    readonly chatId: number;
    readonly at: number;
    readonly scope: string;
  }[];
  /** Chat id → epoch ms the sim stored the bot's first message to it. */
  readonly storedAt: Readonly<Record<string, number>>;
}

/** What one 429 had around it, in Telegram ms. */
export interface RateLimitedContext {
  readonly scope: string;
  /** Requests the client started in the Telegram second up to the refused one's start. */
  readonly startsInSecond: number;
  /** The refused request: its start to the sim refusing it. */
  readonly ownDelayMs: number;
  /** Longest start-to-stored delay among the 30 messages stored before it. */
  readonly longestDelayAheadMs: number;
}

/** Request durations and start-to-stored delays of one run. */
export interface RunTiming {
  readonly requests: number;
  readonly durationP50RealMs: number;
  readonly durationP99RealMs: number;
  readonly durationP50Ms: number;
  readonly durationP99Ms: number;
  /** From the client's start to the sim storing the message, Telegram ms. */
  readonly delayP50Ms: number;
  readonly delayP99Ms: number;
  readonly delayMaxMs: number;
  /** Requests whose delay exceeded `marginCapMs` (the pacer's most margin). */
  readonly delaysOverMarginCap: number;
  readonly rateLimited: readonly RateLimitedContext[];
}

/** Relates the client's log to the sim's at `scale` Telegram ms per real ms. */
export function analyseTiming(
  requests: readonly RequestTiming[],
  sim: SimTiming,
  scale: number,
  marginCapMs: number,
  globalLimit: number,
): RunTiming {
  const durations = summarize(requests.map((r) => r.endedAt - r.startedAt));
  const firstStart = new Map<number, number>();
  const startsByChat = new Map<number, number[]>();
  for (const request of requests) {
    if (!firstStart.has(request.chatId)) firstStart.set(request.chatId, request.startedAt);
    const starts = startsByChat.get(request.chatId) ?? [];
    starts.push(request.startedAt);
    startsByChat.set(request.chatId, starts);
  }
  // Each stored message's delay from the start of the first request to its chat.
  const stored = Object.entries(sim.storedAt)
    .map(([chatId, at]) => ({ at, start: firstStart.get(Number(chatId)) }))
    .filter((s): s is { at: number; start: number } => s.start !== undefined)
    .sort((a, b) => a.at - b.at);
  const storedTimes = stored.map((s) => s.at);
  const delays = stored.map((s) => (s.at - s.start) * scale);
  const delaySummary = summarize(delays);
  const allStarts = requests.map((r) => r.startedAt).sort((a, b) => a - b);
  const windowReal = 1000 / scale;
  const rateLimited = sim.rateLimited.map(({ chatId, at, scope }): RateLimitedContext => {
    const own = latestBefore(startsByChat.get(chatId) ?? [], at);
    const startsInSecond =
      own === undefined ? Number.NaN : countIn(allStarts, own - windowReal, own);
    const before = upperBound(storedTimes, at);
    const ahead = delays.slice(Math.max(0, before - globalLimit), before);
    return {
      scope,
      startsInSecond,
      ownDelayMs: own === undefined ? Number.NaN : (at - own) * scale,
      longestDelayAheadMs: ahead.length === 0 ? Number.NaN : Math.max(...ahead),
    };
  });
  return {
    requests: requests.length,
    durationP50RealMs: durations.p50,
    durationP99RealMs: durations.p99,
    durationP50Ms: durations.p50 * scale,
    durationP99Ms: durations.p99 * scale,
    delayP50Ms: delaySummary.p50,
    delayP99Ms: delaySummary.p99,
    delayMaxMs: delaySummary.max,
    delaysOverMarginCap: delays.filter((delay) => delay > marginCapMs).length,
    rateLimited,
  };
}

function latestBefore(times: readonly number[], at: number): number | undefined {
  let latest: number | undefined;
  for (const time of times)
    if (time <= at && (latest === undefined || time > latest)) latest = time;
  return latest;
}

/** Index of the first value > `at` in ascending `sorted`. */
function upperBound(sorted: readonly number[], at: number): number {
  let low = 0;
  let high = sorted.length;
  while (low < high) {
    const mid = (low + high) >> 1;
    if ((sorted[mid] as number) <= at) low = mid + 1;
    else high = mid;
  }
  return low;
}

/** Values of ascending `sorted` in (from, to]. */
function countIn(sorted: readonly number[], from: number, to: number): number {
  return upperBound(sorted, to) - upperBound(sorted, from);
}
