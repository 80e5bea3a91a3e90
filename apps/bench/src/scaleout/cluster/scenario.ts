// The scale-out scenario: N processes of one bot, one sim, one Redis, a crowd of people each
// sending numbered messages; optionally a worker and then the poller killed (`kill -9`) mid-load,
// with the hand-over measured where people see it: from the kill to the next reply at the sim.
// Measures what the bench reports and the end-to-end test (test/scaleout.test.ts) asserts. It
// lives in the bench because it assembles client, redis and sim as a bot does: @telepace/testing
// cannot hold it (@telepace/redis's tests depend on testing, so testing depending on redis would
// be a cycle), and a package's tests must not import an app.

import { type BotApiSim, start } from "@telepace/bot-api-sim";
import { systemClock } from "@telepace/core";
import { botIdOf, RedisUpdateQueue } from "@telepace/redis";
import { median } from "../../stats.js";
import { Cluster, type ClusterNode, type ClusterStack } from "./cluster.js";
import { type Crowd, crowd, echoEvents } from "./crowd.js";
import type { ProcessPool } from "./process-pool.js";
import { WebhookDelivery } from "./webhook-delivery.js";

export interface ScaleoutOptions {
  readonly redisUrl: string;
  readonly processes: number;
  /**
   * `"telepace"`: the elected poller, the shared queue and shared pacing of @telepace/redis.
   * `"bottleneck"`: grammY's throttler over clustered Bottleneck; `"bullmq"`: grammY sending
   * through a BullMQ queue under its rate limiter. A peer's updates are delivered by chat (see
   * webhook-delivery.ts); no kills. @defaultValue "telepace"
   */
  readonly stack?: ClusterStack;
  readonly people: number;
  readonly messagesPerPerson: number;
  /** Kill a worker that is not the poller this long after the load starts. */
  readonly killWorkerAfterMs?: number;
  /** Kill the poller this long after the load starts, then send `afterPollerKill` more each. */
  readonly killPollerAfterMs?: number;
  readonly afterPollerKill?: number;
  /**
   * People who write nothing until the poller is killed, then one message each: their replies
   * measure the poller's hand-over without a backlog in front of them. @defaultValue 0
   */
  readonly pollerProbes?: number;
  /** The worker lease; undefined: the library's default, as the reference bot runs. */
  readonly leaseMs?: number | undefined;
  /** Every Bot API call takes this much longer at the sim (a round trip). @defaultValue 0 */
  readonly latencyMs?: number;
  /** false: each process paces alone (the baseline without a shared store). @defaultValue true */
  readonly sharedPacing?: boolean;
  /**
   * Ends the run this long after the first echo even if messages are still waiting, and measures
   * the sends up to then (a throughput run's cost is then the same at any pace); no kills.
   * Undefined: the run ends once every message was echoed. @defaultValue undefined
   */
  readonly windowMs?: number | undefined;
  /** Where the processes come from; undefined: started for this run alone. */
  readonly pool?: ProcessPool | undefined;
}

export interface ScaleoutResult {
  readonly stack: ClusterStack;
  readonly processes: number;
  /** The median of the processes' round trips at start (each a median of 5 `getMe`), ms. */
  readonly roundTripMs: number;
  readonly sent: number;
  /**
   * Echo sends per second over Telegram's 30/s: sends ÷ (first-to-last span + 1 s), since a
   * sliding window of 30 per second admits 30 at the start of every second, the last one included.
   */
  readonly sendsPerSecondVsLimit: number;
  readonly rateLimited: number;
  /**
   * The most sends the sim received within any 1,000 ms: above 30, a strictly sliding window
   * (stricter than the sim's token bucket) would have answered one of them with a 429.
   */
  readonly busiestSecondSends: number;
  /** Echoes that came before an earlier message's echo, in one chat. */
  readonly orderViolations: number;
  /**
   * Messages never echoed; in a run with a window, the sends the bot gave up on by its end (the
   * rest of what was not echoed then was still waiting, see `waitingAtWindowEnd`).
   */
  readonly lost: number;
  /** Messages neither echoed nor given up on when the window ended; undefined without one. */
  readonly waitingAtWindowEnd: number | undefined;
  /** Echoed more than once (at least once: an update interrupted by a kill runs again). */
  readonly duplicates: number;
  /**
   * From the worker kill until no lease of the dead worker was left: its people handed back to the
   * ready set and claimed by the others. Undefined without a kill.
   */
  readonly handoverMs: number | undefined;
  /**
   * From the worker kill to the next reply the sim received in each chat whose update the dead
   * worker held, the longest of them: what its people waited. Undefined without a kill (or when
   * the dead worker held none).
   */
  readonly handoverAtSimMs: number | undefined;
  /** Chats whose update the killed worker held. */
  readonly chatsHeldByKilledWorker: number;
  /** From the poller kill until another process held the lease; undefined without a kill. */
  readonly pollerTakeoverMs: number | undefined;
  /**
   * From the poller kill to the sim's reply to the probes (see `pollerProbes`), the longest;
   * undefined without a poller kill or probes.
   */
  readonly pollerHandoverAtSimMs: number | undefined;
  /** Real time from the load's start to the run's end (to the window's end, for a window). */
  readonly durationMs: number;
}

/**
 * One throughput run measured twice (`runScaleoutPastWindow`): over its window, as a run cut there
 * would be, and to its last echo. Up to the window's end nothing differs from a run that stops
 * there, so the window's figures are those of such a run.
 */
export interface ScaleoutViews {
  readonly window: ScaleoutResult;
  readonly toLastEcho: ScaleoutResult;
}

const GLOBAL_LIMIT_PER_SECOND = 30;
let runs = 0;

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

async function waitFor(what: string, check: () => Promise<boolean> | boolean, timeoutMs: number) {
  const deadline = performance.now() + timeoutMs;
  while (!(await check())) {
    if (performance.now() > deadline) throw new Error(`scaleout: timed out waiting for ${what}`);
    await sleep(20);
  }
}

/** Runs the scenario and tears everything down. */
export async function runScaleout(options: ScaleoutOptions): Promise<ScaleoutResult> {
  return (await run(options, false)).window;
}

/**
 * A throughput run with a window that goes on to the last echo: the window's figures and the
 * whole run's from one run, for the cost of the run to the last echo alone. No kills.
 */
export async function runScaleoutPastWindow(
  options: ScaleoutOptions & { readonly windowMs: number },
): Promise<ScaleoutViews> {
  if (!(Number.isFinite(options.windowMs) && options.windowMs > 0)) {
    throw new RangeError(`Expected \`windowMs\` to be a number > 0, got ${options.windowMs}`);
  }
  if (options.killWorkerAfterMs !== undefined || options.killPollerAfterMs !== undefined) {
    throw new RangeError("Expected no kills in a run measured over a window");
  }
  const { window, toLastEcho } = await run(options, true);
  return { window, toLastEcho: toLastEcho as ScaleoutResult };
}

/** The scenario's run: a run with a window and `pastWindow` goes on to its last echo. */
async function run(options: ScaleoutOptions, pastWindow: boolean): Promise<Views> {
  // The sim's transcript times are on this clock, so kill times compare with them.
  const sim = await start({ clock: systemClock });
  if ((options.latencyMs ?? 0) > 0) sim.faults.setLatency(options.latencyMs as number);
  const prefix = `scaleout-${process.pid}-${++runs}`;
  let cluster: Cluster | undefined;
  try {
    const stack = options.stack ?? "telepace";
    cluster = await Cluster.start({
      stack,
      processes: options.processes,
      redisUrl: options.redisUrl,
      apiRoot: sim.apiRoot,
      token: sim.token,
      prefix,
      sharedPacing: options.sharedPacing ?? true,
      ...(options.leaseMs === undefined ? {} : { leaseMs: options.leaseMs }),
      pool: options.pool,
    });
    const running = cluster;
    const scenario = (async () => {
      if (stack !== "telepace") return drivePeer(sim, running, { ...options, stack }, pastWindow);
      await waitFor("a poller", async () => (await running.leader()) !== undefined, 10_000);
      return drive(sim, running, { ...options, prefix }, pastWindow);
    })();
    // A process that stopped on its own ends the run with its reason; the scenario then fails
    // against a closed sim, which says nothing more.
    scenario.catch(() => {});
    return await Promise.race([scenario, running.failed]);
  } finally {
    await cluster?.stop();
    await sim.close();
  }
}

/** A run's result, and with `pastWindow` the same run to its last echo. */
interface Views {
  readonly window: ScaleoutResult;
  readonly toLastEcho: ScaleoutResult | undefined;
}

async function drive(
  sim: BotApiSim,
  cluster: Cluster,
  options: ScaleoutOptions & { readonly prefix: string },
  pastWindow: boolean,
): Promise<Views> {
  const load = crowd(sim, options.people);
  const probes = Array.from({ length: options.pollerProbes ?? 0 }, (_, i) => {
    const person = sim.users.create({ firstName: `probe${i}` });
    return { person, chat: sim.chats.createPrivate(person) };
  });
  const send = load.send;
  const startedAt = performance.now();
  send(options.messagesPerPerson, 0);
  let handoverMs: number | undefined;
  let handoverAtSimMs: number | undefined;
  let chatsHeldByKilledWorker = 0;
  let pollerTakeoverMs: number | undefined;
  let pollerHandoverAtSimMs: number | undefined;
  const kills: Promise<void>[] = [];
  if (options.killWorkerAfterMs !== undefined) {
    kills.push(
      (async () => {
        await sleep(options.killWorkerAfterMs as number);
        const leader = await cluster.leader();
        const victim = cluster.nodes.find((node) => node.isAlive && node !== leader) as ClusterNode;
        const killedAt = systemClock.now();
        await cluster.kill(victim);
        const held = await heldBy(options, sim.token, victim.name);
        chatsHeldByKilledWorker = held.length;
        const [gone, atSim] = await Promise.all([
          leasesGone(options, sim.token, victim.name, killedAt),
          nextReplies(sim, held, killedAt),
        ]);
        handoverMs = gone;
        handoverAtSimMs = atSim;
      })(),
    );
  }
  if (options.killPollerAfterMs !== undefined) {
    kills.push(
      (async () => {
        await sleep(options.killPollerAfterMs as number);
        const leader = (await cluster.leader()) as ClusterNode;
        const at = systemClock.now();
        await cluster.kill(leader);
        for (const probe of probes) sim.sendText(probe.person, probe.chat, "probe");
        send(options.afterPollerKill ?? 1, options.messagesPerPerson);
        const answered = nextReplies(
          sim,
          probes.map((probe) => probe.chat.id),
          at,
        );
        await waitFor("a new poller", async () => (await cluster.leader()) !== undefined, 10_000);
        pollerTakeoverMs = systemClock.now() - at;
        pollerHandoverAtSimMs = await answered;
      })(),
    );
  }
  await Promise.all(kills);
  const { total, echoed } = load;
  // Done when every message was echoed, or (a send that failed for good is never echoed) when
  // every update was fetched and completed, or when the window is over (unless past it).
  const queue = new RedisUpdateQueue({
    redis: options.redisUrl,
    botId: botIdOf(sim.token),
    prefix: options.prefix,
  });
  let windowEnd: WindowEnd | undefined;
  try {
    await waitFor(
      "every message echoed or completed",
      async () => {
        if (echoed() >= total()) return true;
        if (windowEnd === undefined && isWindowOver(load, options.windowMs)) {
          const gaveUp = (await cluster.stats()).reduce((sum, node) => sum + node.gaveUp, 0);
          windowEnd = windowEndOf(sim, load, options.windowMs as number, gaveUp);
          if (!pastWindow) return true;
        }
        return sim.pendingUpdates() === 0 && (await queue.unfinished()) === 0 && echoed() > 0;
      },
      120_000,
    );
  } finally {
    await queue.close();
  }
  // Let a duplicate from a hand-over land, if one is coming.
  if (kills.length > 0) await sleep(200);
  return views(sim, load, windowEnd, pastWindow, startedAt, {
    stack: "telepace",
    processes: options.processes,
    roundTripMs: median(cluster.roundTripsMs),
    handoverMs,
    handoverAtSimMs,
    chatsHeldByKilledWorker,
    pollerTakeoverMs,
    pollerHandoverAtSimMs,
  });
}

/** A peer's run: updates delivered by chat, no kills; done once every process is idle. */
async function drivePeer(
  sim: BotApiSim,
  cluster: Cluster,
  options: ScaleoutOptions & { readonly stack: ClusterStack },
  pastWindow: boolean,
): Promise<Views> {
  const load = crowd(sim, options.people);
  const delivery = new WebhookDelivery(sim.apiRoot, sim.token, (update) => cluster.deliver(update));
  const startedAt = performance.now();
  load.send(options.messagesPerPerson, 0);
  let windowEnd: WindowEnd | undefined;
  try {
    // Done when every message was echoed, or (a send that failed for good is never echoed) when
    // every update was delivered, every process finished what it got and every send settled, or
    // when the window is over (unless past it).
    await waitFor(
      "every message echoed or finished",
      async () => {
        if (load.echoed() >= load.total()) return true;
        const isOver = windowEnd === undefined && isWindowOver(load, options.windowMs);
        if (!isOver && delivery.delivered < load.total()) return false;
        const stats = await cluster.peerStats();
        if (isOver) {
          const gaveUp = stats.reduce((sum, process) => sum + process.gaveUp, 0);
          windowEnd = windowEndOf(sim, load, options.windowMs as number, gaveUp);
          if (!pastWindow) return true;
        }
        const settled = stats.reduce((sum, process) => sum + process.sendsSettled, 0);
        return settled >= load.total() && stats.every((s) => s.finished === s.received);
      },
      120_000,
    );
  } finally {
    await delivery.stop();
  }
  return views(sim, load, windowEnd, pastWindow, startedAt, {
    stack: options.stack,
    processes: options.processes,
    roundTripMs: median(cluster.roundTripsMs),
    handoverMs: undefined,
    handoverAtSimMs: undefined,
    chatsHeldByKilledWorker: 0,
    pollerTakeoverMs: undefined,
    pollerHandoverAtSimMs: undefined,
  });
}

/**
 * Where a run with a window was cut: the sim's time then, what the bot had given up on and the
 * sim's 429s by then, and when the bench saw it (`performance.now()`).
 */
interface WindowEnd {
  readonly atMs: number;
  readonly gaveUp: number;
  readonly rateLimited: number;
  readonly seenAt: number;
}

function isWindowOver(load: Crowd, windowMs: number | undefined): boolean {
  const first = load.firstEchoAtMs();
  return windowMs !== undefined && first !== undefined && systemClock.now() >= first + windowMs;
}

function windowEndOf(sim: BotApiSim, load: Crowd, windowMs: number, gaveUp: number): WindowEnd {
  return {
    atMs: (load.firstEchoAtMs() as number) + windowMs,
    gaveUp,
    rateLimited: sim.counters().tooManyRequests,
    seenAt: performance.now(),
  };
}

/** The figures every view of a run shares (the measured ones come from the sim). */
type RunFacts = Pick<
  ScaleoutResult,
  | "stack"
  | "processes"
  | "roundTripMs"
  | "handoverMs"
  | "handoverAtSimMs"
  | "chatsHeldByKilledWorker"
  | "pollerTakeoverMs"
  | "pollerHandoverAtSimMs"
>;

/** The run up to its window's end (or all of it), and with `pastWindow` all of it too. */
function views(
  sim: BotApiSim,
  load: Crowd,
  windowEnd: WindowEnd | undefined,
  pastWindow: boolean,
  startedAt: number,
  facts: RunFacts,
): Views {
  const endedAt = performance.now();
  const windowClosedAt = pastWindow ? (windowEnd?.seenAt ?? endedAt) : endedAt;
  return {
    window: measure(sim, load, windowEnd, { ...facts, durationMs: windowClosedAt - startedAt }),
    toLastEcho: pastWindow
      ? measure(sim, load, undefined, { ...facts, durationMs: endedAt - startedAt })
      : undefined,
  };
}

/** The run's figures from the sim's transcripts, up to the window's end when it was cut. */
function measure(
  sim: BotApiSim,
  { chats, expected }: Crowd,
  windowEnd: WindowEnd | undefined,
  run: RunFacts & Pick<ScaleoutResult, "durationMs">,
): ScaleoutResult {
  let orderViolations = 0;
  let lost = 0;
  let duplicates = 0;
  let sent = 0;
  let first = Number.POSITIVE_INFINITY;
  let last = Number.NEGATIVE_INFINITY;
  const sentAt: number[] = [];
  const until = windowEnd?.atMs ?? Number.POSITIVE_INFINITY;
  for (const chat of chats) {
    const sends = echoEvents(sim, chat.id).filter((e) => e.atMs <= until);
    const wanted = expected.get(chat.id) ?? [];
    const order = sends.map((e) => wanted.indexOf((e.text as string).slice(5)));
    for (let i = 1; i < order.length; i++) {
      if ((order[i] as number) < (order[i - 1] as number)) orderViolations++;
    }
    const distinct = new Set(order);
    lost += wanted.length - distinct.size;
    duplicates += order.length - distinct.size;
    sent += sends.length;
    for (const e of sends) {
      first = Math.min(first, e.atMs);
      last = Math.max(last, e.atMs);
      sentAt.push(e.atMs);
    }
  }
  // Cut by the window: the run's span is the window, whether or not a send fell at its end.
  const seconds = ((windowEnd === undefined ? last : windowEnd.atMs) - first) / 1000 + 1;
  return {
    sent,
    sendsPerSecondVsLimit: sent > 0 ? sent / seconds / GLOBAL_LIMIT_PER_SECOND : 0,
    rateLimited: windowEnd?.rateLimited ?? sim.counters().tooManyRequests,
    busiestSecondSends: busiestSecond(sentAt),
    orderViolations,
    lost: windowEnd === undefined ? lost : windowEnd.gaveUp,
    waitingAtWindowEnd: windowEnd === undefined ? undefined : Math.max(0, lost - windowEnd.gaveUp),
    duplicates,
    ...run,
  };
}

/** The most of `times` (ms) that fall within any 1,000 ms (a window [t, t + 1000)). */
export function busiestSecond(times: readonly number[]): number {
  const sorted = [...times].sort((a, b) => a - b);
  let busiest = 0;
  for (let from = 0, to = 0; to < sorted.length; to++) {
    while ((sorted[to] as number) - (sorted[from] as number) >= 1_000) from++;
    busiest = Math.max(busiest, to - from + 1);
  }
  return busiest;
}

/** The chats whose update `worker` held (read after it was killed: nothing of it moved yet). */
async function heldBy(
  run: { readonly redisUrl: string; readonly prefix: string },
  token: string,
  worker: string,
): Promise<number[]> {
  const queue = new RedisUpdateQueue({
    redis: run.redisUrl,
    botId: botIdOf(token),
    prefix: run.prefix,
  });
  try {
    const updates = await queue.updatesOwnedBy(worker);
    return updates.flatMap((update) =>
      update.message === undefined ? [] : [update.message.chat.id],
    );
  } finally {
    await queue.close();
  }
}

/**
 * Milliseconds from `since` until every chat of `chatIds` got a reply at the sim after it, the
 * longest; undefined for no chats.
 */
async function nextReplies(
  sim: BotApiSim,
  chatIds: readonly number[],
  since: number,
): Promise<number | undefined> {
  if (chatIds.length === 0) return undefined;
  const firstAfter = (chatId: number) =>
    sim
      .transcript(chatId)
      .events.find((e) => e.actor === "bot" && e.kind === "send" && e.atMs > since)?.atMs;
  await waitFor(
    "a reply in every affected chat",
    () => chatIds.every((id) => firstAfter(id) !== undefined),
    60_000,
  );
  return Math.max(...chatIds.map((id) => (firstAfter(id) as number) - since));
}

/** Milliseconds from `killedAt` until `worker` owns no principal: each handed on to another. */
async function leasesGone(
  run: { readonly redisUrl: string; readonly prefix: string },
  token: string,
  worker: string,
  killedAt: number,
) {
  const queue = new RedisUpdateQueue({
    redis: run.redisUrl,
    botId: botIdOf(token),
    prefix: run.prefix,
  });
  try {
    await waitFor(
      "the dead worker's leases to move",
      async () => (await queue.ownedBy(worker)) === 0,
      30_000,
    );
    return systemClock.now() - killedAt;
  } finally {
    await queue.close();
  }
}
