// The Bot API sim in a process of its own for the broadcast bench (a paid broadcast is 1000
// requests a second: the sim and the bot each get a core), with the recipients and the people
// who chat during the broadcast. The process hosts one sim at a time, a fresh one for each run,
// so a run does not pay for starting Node and loading the sim; its parent (sim-link.ts) drives it
// over IPC.

import diagnosticsChannel from "node:diagnostics_channel";
import type { Chat, User } from "@grammyjs/types";
import { type BotApiSim, botApiSimChannels, start } from "@telepace/bot-api-sim";
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

/** What the parent asks of the process. */
export type SimCommand =
  | { readonly type: "open"; readonly config: SimConfig }
  | { readonly type: "chat" }
  | { readonly type: "stop-chat" }
  | { readonly type: "report" }
  | { readonly type: "close" }
  | { readonly type: "exit" };

/** What the process tells its parent once the current sim is closed. */
export interface SimClosed {
  readonly type: "closed";
}

/** One run's sim: its recipients, its chatters and what it counted. */
class RunSim {
  readonly #sim: BotApiSim;
  readonly #config: SimConfig;
  readonly #recipients: Chat[] = [];
  readonly #chatters: { user: User; chat: Chat }[] = [];
  readonly #timers = new Set<NodeJS.Timeout>();
  readonly rateLimited: { chatId: number; at: number; scope: string }[] = [];
  #seed: number;

  private constructor(sim: BotApiSim, config: SimConfig) {
    this.#sim = sim;
    this.#config = config;
    this.#seed = config.seed >>> 0 || 1;
    for (let i = 0; i < config.recipients; i++) {
      this.#recipients.push(sim.chats.createPrivate(sim.users.create()));
    }
    for (let i = 0; i < config.chatters; i++) {
      const user = sim.users.create({ firstName: `Chatter ${i}` });
      this.#chatters.push({ user, chat: sim.chats.createPrivate(user) });
    }
  }

  static async open(config: SimConfig): Promise<RunSim> {
    const sim = await start({
      timeScale: config.timeScale,
      paidBroadcasts: config.paidBroadcasts,
      maxUsers: config.recipients + config.chatters + 10,
      maxChats: config.recipients + config.chatters + 10,
      maxTranscriptEvents: 1_000,
      maxPendingUpdates: 100_000,
    });
    return new RunSim(sim, config);
  }

  ready(): SimReady {
    return {
      type: "ready",
      apiRoot: this.#sim.apiRoot,
      token: this.#sim.token,
      recipients: this.#recipients.map((chat) => chat.id),
    };
  }

  #random(): number {
    // xorshift32: the same intervals for every contender.
    this.#seed ^= this.#seed << 13;
    this.#seed >>>= 0;
    this.#seed ^= this.#seed >>> 17;
    this.#seed ^= this.#seed << 5;
    this.#seed >>>= 0;
    return this.#seed / 2 ** 32;
  }

  /** Each chatter writes every 2–6 s of Telegram time until stopped. */
  chat(): void {
    for (const { user, chat: where } of this.#chatters) {
      const next = (): void => {
        const timer = setTimeout(
          () => {
            this.#timers.delete(timer);
            this.#sim.sendText(user, where, `ping ${Date.now()}`);
            next();
          },
          (2_000 + this.#random() * 4_000) / this.#config.timeScale,
        );
        this.#timers.add(timer);
      };
      next();
    }
  }

  stopChat(): void {
    for (const timer of this.#timers) clearTimeout(timer);
    this.#timers.clear();
  }

  report(): SimReport {
    const sim = this.#sim;
    const messagesPerRecipient = this.#recipients.map(
      (chat) => sim.transcript(chat).messages.length,
    );
    const storedAt: Record<string, number> = {};
    const times = this.#recipients.flatMap((chat) => {
      const sent = sim
        .transcript(chat)
        .events.filter((e) => e.actor === "bot")
        .map((e) => e.atMs);
      // The sim's clock is performance.now(): its epoch is this process's time origin.
      if (sent[0] !== undefined) storedAt[chat.id] = performance.timeOrigin + sent[0];
      return sent;
    });
    const replyLatencyMs: number[] = [];
    for (const { chat: where } of this.#chatters) {
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
      timing: { rateLimited: this.rateLimited, storedAt },
    };
  }

  async close(): Promise<void> {
    this.stopChat();
    await this.#sim.close({ timeoutMs: 1_000 });
  }
}

let current: RunSim | undefined;
diagnosticsChannel.subscribe(botApiSimChannels["rate-limited"], (message) => {
  const { chatId, scope } = message as { chatId: number; scope: string };
  current?.rateLimited.push({ chatId, at: performance.timeOrigin + performance.now(), scope });
});

// Commands run one after another, in the order they came.
let queue: Promise<void> = Promise.resolve();
async function handle(command: SimCommand): Promise<void> {
  switch (command.type) {
    case "open":
      await current?.close();
      current = await RunSim.open(command.config);
      process.send?.(current.ready());
      break;
    case "chat":
      current?.chat();
      break;
    case "stop-chat":
      current?.stopChat();
      break;
    case "report":
      if (current !== undefined) process.send?.(current.report());
      break;
    case "close": {
      const closing = current;
      current = undefined;
      await closing?.close();
      process.send?.({ type: "closed" } satisfies SimClosed);
      break;
    }
    case "exit":
      await current?.close();
      process.exit(0);
  }
}
process.on("message", (command: SimCommand) => {
  queue = queue
    .then(() => handle(command))
    .catch((error: unknown) => {
      console.error(error);
      process.exit(1);
    });
});
process.send?.({ type: "host-ready" });
