// An update stream played by users of a Bot API simulator on loopback, behind a link with a
// fixed added delay: each principal of the stream is a user with a private chat, and each update
// is a text message carrying its position in the stream.

import type { Chat, Update, User } from "@grammyjs/types";
import { type BotApiSim, type BotApiSimOptions, start } from "@telepace/bot-api-sim";
import { median } from "../stats.js";
import type { UpdateStream } from "./workload.js";

/** A simulator populated with a stream's principals. */
export interface SimLink {
  readonly sim: BotApiSim;
  /** The user sends update `index` of the stream (a text message with the index as its text). */
  send(index: number): void;
  /** Times `probes` getMe calls over HTTP, one after another: the round trip a bot sees, ms (median). */
  measureRoundTripMs(probes?: number): Promise<number>;
  close(): Promise<void>;
}

/** The position in the stream of an update that came through a {@link SimLink}. */
export function simIndexOf(update: Update): number {
  return Number(update.message?.text);
}

/**
 * Starts a simulator with flood limits off (the bots only read), `latencyMs` added to every Bot
 * API call, and one user with a private chat per principal of `stream`; `options` go to the sim.
 */
export async function openSimLink(
  stream: UpdateStream,
  latencyMs: number,
  options: BotApiSimOptions = {},
): Promise<SimLink> {
  const sim = await start({ rateLimits: false, maxPendingUpdates: 1_000_000, ...options });
  if (latencyMs > 0) sim.faults.setLatency(latencyMs, { methods: ["*"] });
  const users: User[] = [];
  const chats: Chat[] = [];
  for (let principal = 0; principal < stream.options.principals; principal++) {
    const user = sim.users.create({ firstName: `User ${principal}` });
    users.push(user);
    chats.push(sim.chats.createPrivate(user));
  }
  return {
    sim,
    send(index) {
      const principal = stream.principalOf[index] as number;
      sim.sendText(users[principal] as User, chats[principal] as Chat, String(index));
    },
    async measureRoundTripMs(probes = 3) {
      const times: number[] = [];
      for (let probe = 0; probe < probes; probe++) {
        const startedAt = performance.now();
        const response = await fetch(`${sim.apiRoot}/bot${sim.token}/getMe`);
        await response.arrayBuffer();
        times.push(performance.now() - startedAt);
      }
      return median(times);
    },
    close: () => sim.close({ timeoutMs: 2_000 }),
  };
}

/**
 * Sends every update of the stream at its arrival time (ms after `startedAt`), writing the time
 * each was actually sent into `sentAtMs`, so queueing is measured from the real send. Resolves
 * when every update was sent or `signal` aborted.
 */
export async function sendArrivals(
  link: SimLink,
  stream: UpdateStream,
  startedAt: number,
  sentAtMs: Float64Array,
  signal: AbortSignal,
): Promise<void> {
  let next = 0;
  const total = stream.updates.length;
  while (next < total && !signal.aborted) {
    const now = performance.now() - startedAt;
    while (next < total && (stream.arrivalMs[next] as number) <= now) {
      sentAtMs[next] = performance.now() - startedAt;
      link.send(next);
      next++;
    }
    if (next >= total) break;
    const waitMs = Math.max(
      0,
      (stream.arrivalMs[next] as number) - (performance.now() - startedAt),
    );
    await new Promise((resolve) => setTimeout(resolve, Math.min(waitMs, 1)));
  }
}
