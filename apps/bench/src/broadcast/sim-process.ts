// The Bot API sim in a process of its own for the broadcast bench (a paid broadcast is 1000
// requests a second: the sim and the bot each get a core), with the recipients and the people
// who chat during the broadcast. Its parent (sim-link.ts) drives it over IPC.
// Configured by TELEPACE_BROADCAST_SIM (JSON: SimConfig).

import diagnosticsChannel from "node:diagnostics_channel";
import type { Chat, User } from "@grammyjs/types";
import { botApiSimChannels, start } from "@telepace/bot-api-sim";
import type { SimTiming } from "./timing.js";

export interface SimConfig {
  readonly recipients: number;
  readonly chatters: number;
  readonly timeScale: number;
  readonly paidBroadcasts: boolean;
  /** Seed of the chatters' intervals. */
  readonly seed: number;
}

/** What the sim tells its parent once ready. */
export interface SimReady {
  readonly type: "ready";
  readonly apiRoot: string;
  readonly token: string;
  readonly recipients: readonly number[];
}

/** The sim's account of a run. */
export interface SimReport {
  readonly type: "report";
  /** Messages the bot sent into each recipient's chat, in recipient order. */
  readonly messagesPerRecipient: readonly number[];
  /** Real ms from each chatter's message to the bot's reply to it (NaN: no reply). */
  readonly replyLatencyMs: readonly number[];
  readonly tooManyRequests: number;
  readonly paidBroadcasts: number;
  readonly paidBroadcastStars: number;
  readonly messagesSent: number;
  /** Real ms from the first to the last broadcast message stored. */
  readonly spanMs: number;
  /** Real time of the first and last broadcast message stored (the sim's clock). */
  readonly firstAtMs: number;
  readonly lastAtMs: number;
  /** Each 429 and each recipient's first message, in epoch ms (see timing.ts). */
  readonly timing: SimTiming;
}

const config = JSON.parse(process.env.TELEPACE_BROADCAST_SIM ?? "{}") as SimConfig;
const sim = await start({
  timeScale: config.timeScale,
  paidBroadcasts: config.paidBroadcasts,
  maxUsers: config.recipients + config.chatters + 10,
  maxChats: config.recipients + config.chatters + 10,
  maxTranscriptEvents: 1_000,
  maxPendingUpdates: 100_000,
});
const rateLimited: { chatId: number; at: number; scope: string }[] = [];
diagnosticsChannel.subscribe(botApiSimChannels["rate-limited"], (message) => {
  const { chatId, scope } = message as { chatId: number; scope: string };
  rateLimited.push({ chatId, at: performance.timeOrigin + performance.now(), scope });
});
const recipients: Chat[] = [];
for (let i = 0; i < config.recipients; i++) {
  recipients.push(sim.chats.createPrivate(sim.users.create()));
}
const chatters: { user: User; chat: Chat }[] = [];
for (let i = 0; i < config.chatters; i++) {
  const user = sim.users.create({ firstName: `Chatter ${i}` });
  chatters.push({ user, chat: sim.chats.createPrivate(user) });
}

let seed = config.seed >>> 0 || 1;
function random(): number {
  // xorshift32: the same intervals for every contender.
  seed ^= seed << 13;
  seed >>>= 0;
  seed ^= seed >>> 17;
  seed ^= seed << 5;
  seed >>>= 0;
  return seed / 2 ** 32;
}

const timers = new Set<NodeJS.Timeout>();
/** Each chatter writes every 2–6 s of Telegram time until stopped. */
function chat(): void {
  for (const { user, chat: where } of chatters) {
    const next = (): void => {
      const timer = setTimeout(
        () => {
          timers.delete(timer);
          sim.sendText(user, where, `ping ${Date.now()}`);
          next();
        },
        (2_000 + random() * 4_000) / config.timeScale,
      );
      timers.add(timer);
    };
    next();
  }
}

function report(): SimReport {
  const messagesPerRecipient = recipients.map((chat) => sim.transcript(chat).messages.length);
  const storedAt: Record<string, number> = {};
  const times = recipients.flatMap((chat) => {
    const sent = sim
      .transcript(chat)
      .events.filter((e) => e.actor === "bot")
      .map((e) => e.atMs);
    // The sim's clock is performance.now(): its epoch is this process's time origin.
    if (sent[0] !== undefined) storedAt[chat.id] = performance.timeOrigin + sent[0];
    return sent;
  });
  const replyLatencyMs: number[] = [];
  for (const { chat: where } of chatters) {
    const events = sim.transcript(where).events;
    events.forEach((event, index) => {
      if (event.actor !== "user" || event.kind !== "send") return;
      const reply = events.slice(index + 1).find((e) => e.actor === "bot" && e.kind === "send");
      replyLatencyMs.push(reply === undefined ? Number.NaN : reply.atMs - event.atMs);
    });
  }
  const counters = sim.counters();
  const firstAtMs = Math.min(...times);
  const lastAtMs = Math.max(...times);
  return {
    type: "report",
    messagesPerRecipient,
    replyLatencyMs,
    tooManyRequests: counters.tooManyRequests,
    paidBroadcasts: counters.paidBroadcasts,
    paidBroadcastStars: counters.paidBroadcastStars,
    messagesSent: counters.messagesSent,
    spanMs: lastAtMs - firstAtMs,
    firstAtMs,
    lastAtMs,
    timing: { rateLimited, storedAt },
  };
}

process.on("message", (message: { type: string }) => {
  if (message.type === "chat") chat();
  if (message.type === "stop-chat") {
    for (const timer of timers) clearTimeout(timer);
    timers.clear();
  }
  if (message.type === "report") process.send?.(report());
  if (message.type === "close") void sim.close({ timeoutMs: 1_000 }).then(() => process.exit(0));
});
const ready: SimReady = {
  type: "ready",
  apiRoot: sim.apiRoot,
  token: sim.token,
  recipients: recipients.map((chat) => chat.id),
};
process.send?.(ready);
