// The contenders of the broadcast comparison, each also answering the people who chat meanwhile:
// telepace's BroadcastRegistry over TelegramClient (its progress in a FileUpdateJournal, as a bot
// would keep it), and the hand-written loop over grammY a bot author writes instead — every
// recipient awaited in turn through the transformer-throttler, without and with auto-retry.

import diagnosticsChannel from "node:diagnostics_channel";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { autoRetry } from "@grammyjs/auto-retry";
import { apiThrottler } from "@grammyjs/transformer-throttler";
import {
  type BroadcastEvent,
  BroadcastRegistry,
  broadcastChannels,
  JournalBroadcastStore,
} from "@telepace/broadcast";
import { TelegramClient } from "@telepace/client";
import { FileUpdateJournal } from "@telepace/journal-file";
import { type OutboxEvent, outboxChannels } from "@telepace/outbox";
import { Api, GrammyError, type Transformer } from "grammy";
import { telegramTime } from "../writes/writers.js";
import type { RunDeadline } from "./deadline.js";
import type { RequestLog } from "./timing.js";

/** Where a contender broadcasts, and how. */
export interface BroadcastTarget {
  readonly apiRoot: string;
  readonly token: string;
  readonly recipients: readonly number[];
  /** The sim's time scale: Telegram ms per real ms. */
  readonly scale: number;
  readonly paid: boolean;
  /** When a broadcast still running is stopped (checked at each recipient's outcome). */
  readonly deadline: RunDeadline;
  /** Where the contender records each broadcast request's start and end. */
  readonly log: RequestLog;
}

/** What a contender did, as it saw it. */
export interface ContenderRun {
  /** Telegram ms from the start of the broadcast to the last recipient's outcome (or the cut). */
  readonly elapsedMs: number;
  /** Stopped by its deadline (at it, or once out of reach) before every recipient settled. */
  readonly cut: boolean;
  /** Recipients with an outcome (sent or failed) when it ended. */
  readonly settled: number;
  readonly sent: number;
  readonly failed: number;
  /** telepace's mode at the end (`free`, `paid`, `paid-refused`); the loops send as asked. */
  readonly mode: string;
}

export interface Contender {
  readonly name: string;
  readonly settings: Readonly<Record<string, string | number>>;
  run(target: BroadcastTarget): Promise<ContenderRun>;
}

const TEXT = "Our winter sale starts now: 30% off everything until Sunday.";
const BROADCAST_ID = "bench";

/** Answers every text message with "pong", until stopped; `poll` and `reply` are the client's. */
function replyLoop(
  poll: (
    offset: number,
    signal: AbortSignal,
  ) => Promise<readonly { update_id: number; message?: { chat: { id: number } } }[]>,
  reply: (chatId: number) => Promise<unknown>,
): () => Promise<void> {
  const controller = new AbortController();
  const loop = (async () => {
    let offset = 0;
    while (!controller.signal.aborted) {
      const updates = await poll(offset, controller.signal).catch(() => []);
      for (const update of updates) {
        offset = update.update_id + 1;
        const chat = update.message?.chat.id;
        if (chat !== undefined) void reply(chat).catch(() => {});
      }
    }
  })();
  return async () => {
    controller.abort();
    await loop;
  };
}

/** telepace: BroadcastRegistry over TelegramClient with every default, in Telegram time. */
export const telepaceContender: Contender = {
  name: "telepace BroadcastRegistry",
  settings: {
    outbox: "defaults (maxInFlight 64 for paid)",
    store: "JournalBroadcastStore over FileUpdateJournal",
  },
  async run(target) {
    const { clock, classify } = telegramTime(target.scale);
    const client = new TelegramClient({
      token: target.token,
      apiRoot: target.apiRoot,
      clock,
      requestTimeoutMs: 30_000 * target.scale,
      outbox: { classifyFailure: classify, ...(target.paid ? { maxInFlight: 64 } : {}) },
    });
    const dir = await mkdtemp(path.join(tmpdir(), "telepace-bench-broadcast-"));
    const journal = await FileUpdateJournal.open(dir);
    const registry = new BroadcastRegistry({
      client,
      store: new JournalBroadcastStore(journal),
      clock,
    });
    const stopReplies = replyLoop(
      (offset, signal) => client.getUpdates({ offset, timeout: 1 }, { signal }),
      (chatId) => client.sendMessage(chatId, "pong"),
    );
    // The outbox's own view of each request: from its start (the broadcast's durable write, then
    // the HTTP call) to its answer, as its pacing margin measures it.
    const onStart = (event: unknown) => {
      const { chat } = event as OutboxEvent;
      if (chat !== undefined) target.log.start(Number(chat));
    };
    const onEnd = (event: unknown) => {
      const { chat } = event as OutboxEvent;
      if (chat !== undefined) target.log.end(Number(chat));
    };
    diagnosticsChannel.subscribe(outboxChannels.started, onStart);
    diagnosticsChannel.subscribe(outboxChannels["rate-limited"], onEnd);
    diagnosticsChannel.subscribe(outboxChannels.settled, onEnd);
    const startedAt = clock.now();
    const job = registry.start(BROADCAST_ID, {
      message: { method: "sendMessage", params: { text: TEXT } },
      recipients: target.recipients,
      paid: target.paid,
    });
    // The deadline is checked at each outcome, as the loops check it before each send, and at
    // the deadline itself for a broadcast that settles nothing more.
    let outcomes = 0;
    let isStopping = false;
    const onSettled = (message: unknown) => {
      const event = message as BroadcastEvent;
      if (event.type !== "settled" || event.id !== BROADCAST_ID || isStopping) return;
      outcomes++;
      if (!target.deadline.isOver(clock.now() - startedAt, outcomes)) return;
      isStopping = true;
      void job.cancel();
    };
    diagnosticsChannel.subscribe(broadcastChannels.settled, onSettled);
    const { deadlineMs } = target.deadline;
    const deadline = Number.isFinite(deadlineMs)
      ? clock.setTimer(() => void job.cancel(), deadlineMs)
      : undefined;
    try {
      const report = await job.result;
      const settled = report.counts.sent + report.counts.failed + report.counts.maybeDelivered;
      return {
        elapsedMs: report.elapsedMs,
        cut: report.status !== "completed",
        settled,
        sent: report.counts.sent,
        failed: report.counts.failed + report.counts.maybeDelivered,
        mode: report.mode,
      };
    } finally {
      deadline?.cancel();
      diagnosticsChannel.unsubscribe(broadcastChannels.settled, onSettled);
      diagnosticsChannel.unsubscribe(outboxChannels.started, onStart);
      diagnosticsChannel.unsubscribe(outboxChannels["rate-limited"], onEnd);
      diagnosticsChannel.unsubscribe(outboxChannels.settled, onEnd);
      await stopReplies();
      await registry.close();
      await client.close({ timeoutMs: 1_000 });
      await journal.close();
      await rm(dir, { recursive: true, force: true });
    }
  },
};

/**
 * The throttler's documented defaults, every millisecond divided by the time scale, with the
 * global reservoir at `perSecond` (30, or 1000 for a paid broadcast: equal settings).
 */
function throttlerAt(scale: number, perSecond: number) {
  return apiThrottler({
    global: {
      reservoir: perSecond,
      reservoirRefreshAmount: perSecond,
      reservoirRefreshInterval: 1000 / scale,
      heartbeatInterval: 250 / scale,
    },
    out: { maxConcurrent: 1, minTime: 1000 / scale },
  });
}

/** Records each sendMessage's HTTP call: installed first, it runs inside the throttler. */
function timed(log: RequestLog): Transformer {
  return async (prev, method, payload, signal) => {
    const chatId = method === "sendMessage" ? Number((payload as { chat_id: unknown }).chat_id) : 0;
    if (chatId !== 0) log.start(chatId);
    try {
      return await prev(method, payload, signal);
    } finally {
      if (chatId !== 0) log.end(chatId);
    }
  };
}

// grammY types its signal parameter with the abort-controller shim; at runtime it is the same.
type GrammySignal = NonNullable<Parameters<Api["getUpdates"]>[1]>;

/** The loop a grammY author writes: each recipient awaited in turn, failures caught and counted. */
export function grammyLoop(withAutoRetry: boolean): Contender {
  return {
    name: `grammY loop + throttler${withAutoRetry ? " + auto-retry" : ""}`,
    settings: {
      install: withAutoRetry ? "throttler → auto-retry" : "throttler",
      loop: "for … of recipients: await sendMessage",
    },
    async run(target) {
      const api = new Api(target.token, { apiRoot: target.apiRoot });
      api.config.use(timed(target.log));
      api.config.use(throttlerAt(target.scale, target.paid ? 1000 : 30));
      if (withAutoRetry) api.config.use(autoRetry());
      const stopReplies = replyLoop(
        (offset, signal) =>
          api.getUpdates({ offset, timeout: 1 }, signal as unknown as GrammySignal),
        (chatId) => api.sendMessage(chatId, "pong"),
      );
      const started = performance.now();
      let sent = 0;
      let failed = 0;
      try {
        for (const id of target.recipients) {
          const elapsedMs = (performance.now() - started) * target.scale;
          if (target.deadline.isOver(elapsedMs, sent + failed)) break;
          try {
            await api.sendMessage(id, TEXT, target.paid ? { allow_paid_broadcast: true } : {});
            sent++;
          } catch (error) {
            if (!(error instanceof GrammyError)) throw error;
            failed++;
          }
        }
        return {
          elapsedMs: (performance.now() - started) * target.scale,
          cut: sent + failed < target.recipients.length,
          settled: sent + failed,
          sent,
          failed,
          mode: target.paid ? "paid" : "free",
        };
      } finally {
        await stopReplies();
      }
    },
  };
}
