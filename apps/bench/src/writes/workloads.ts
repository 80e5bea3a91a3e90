// The write workloads, planned in Telegram time and replayed in real time with the same texts
// for every contender: streaming jobs, a broadcast, a mix of groups and private chats, faults.

import type { BotApiSim } from "@telepace/bot-api-sim";
import { randomInt, seededRandom } from "../random.js";
import type { SendRecord, Writer } from "./writers.js";

/** A job streaming progress into one message, then sending its final message. */
export interface StreamPlan {
  /** When the job starts, Telegram ms after the start of the run. */
  readonly startMs: number;
  /** Progress states per second (Telegram time). */
  readonly hz: number;
  /** Telegram ms from the start of the job to its final message. */
  readonly durationMs: number;
}

/** Everything the workload does in one chat. */
export interface ChatPlan {
  readonly type: "private" | "group";
  readonly stream?: StreamPlan;
  /** Standalone messages (answers to other users), Telegram ms after the start of the run. */
  readonly repliesAtMs: readonly number[];
  /** One message at the start of the run. */
  readonly isBroadcast: boolean;
}

/** Transport faults the sim injects into the first sendMessage calls of a run. */
export interface FaultPlan {
  /** Calls stored by the sim whose connection is then cut: the answer never arrives. */
  readonly resetAfterProcessing: number;
  /** Calls answered 502 before the sim stores anything. */
  readonly badGatewayBeforeProcessing: number;
}

/** A workload: its chats and a name. */
export interface WritePlan {
  readonly id: "streaming" | "broadcast" | "mix" | "faults";
  readonly title: string;
  readonly chats: readonly ChatPlan[];
  readonly faults?: FaultPlan;
  /**
   * Each chat's replies come from one handler, one after the other: a send that throws ends it
   * (a handler without try/catch), and its later replies are never sent.
   */
  readonly isHandler?: boolean;
}

/** Sizes of the three workloads. */
export interface WorkloadSizes {
  readonly streamingChats: number;
  readonly broadcastChats: number;
  readonly mixPrivateChats: number;
  readonly mixGroups: number;
  /**
   * Length of a progress stream, Telegram ms, drawn uniformly per job (jobs do not end on a
   * whole number of pacing intervals).
   */
  readonly streamMs: readonly [min: number, max: number];
  /** Streams start spread over this many Telegram ms. */
  readonly staggerMs: number;
  /** Replies per chat in the mix, spread evenly over its stream. */
  readonly repliesPerChat: number;
  /** Private chats of the fault workload, each getting messages at these Telegram ms. */
  readonly faultChats: number;
  readonly faultMessagesAtMs: readonly number[];
  readonly faults: FaultPlan;
  readonly seed: number;
}

function stream(random: () => number, sizes: WorkloadSizes): StreamPlan {
  return {
    startMs: randomInt(random, 0, sizes.staggerMs),
    hz: randomInt(random, 10, 20),
    durationMs: randomInt(random, sizes.streamMs[0], sizes.streamMs[1]),
  };
}

/** Builds the three workloads from their sizes (deterministic for a seed). */
export function writePlans(sizes: WorkloadSizes): WritePlan[] {
  const random = seededRandom(sizes.seed);
  const streaming: ChatPlan[] = Array.from({ length: sizes.streamingChats }, () => ({
    type: "private",
    stream: stream(random, sizes),
    repliesAtMs: [],
    isBroadcast: false,
  }));
  const broadcast: ChatPlan[] = Array.from({ length: sizes.broadcastChats }, () => ({
    type: "private",
    repliesAtMs: [],
    isBroadcast: true,
  }));
  const mix: ChatPlan[] = Array.from(
    { length: sizes.mixPrivateChats + sizes.mixGroups },
    (_, index) => {
      const plan = stream(random, sizes);
      const gap = plan.durationMs / (sizes.repliesPerChat + 1);
      return {
        type: index < sizes.mixGroups ? "group" : "private",
        stream: plan,
        repliesAtMs: Array.from(
          { length: sizes.repliesPerChat },
          (_, reply) => plan.startMs + Math.round(gap * (reply + 1)),
        ),
        isBroadcast: false,
      };
    },
  );
  const faults: ChatPlan[] = Array.from({ length: sizes.faultChats }, () => ({
    type: "private",
    repliesAtMs: sizes.faultMessagesAtMs,
    isBroadcast: false,
  }));
  const seconds = ([min, max]: readonly [number, number]): string =>
    `${min / 1000}–${max / 1000} s`;
  return [
    {
      id: "streaming",
      title: `(a) streaming: ${sizes.streamingChats} private chats, progress at 10–20 Hz for ${seconds(sizes.streamMs)}, then a final message`,
      chats: streaming,
    },
    {
      id: "broadcast",
      title: `(b) broadcast: one message to each of ${sizes.broadcastChats} private chats at once`,
      chats: broadcast,
    },
    {
      id: "mix",
      title: `(c) mix: ${sizes.mixGroups} supergroups + ${sizes.mixPrivateChats} private chats, each streaming at 10–20 Hz for ${seconds(sizes.streamMs)} with ${sizes.repliesPerChat} replies in between, then a final message`,
      chats: mix,
    },
    {
      id: "faults",
      title: `(d) faults: ${sizes.faultChats} private chats, a handler in each sending a message at ${sizes.faultMessagesAtMs.map((ms) => ms / 1000).join(", ")} s (no try/catch: a throw ends it); the first ${sizes.faults.resetAfterProcessing} sends are stored but their answer is cut off, the next ${sizes.faults.badGatewayBeforeProcessing} get a 502 before anything is stored`,
      chats: faults,
      faults: sizes.faults,
      isHandler: true,
    },
  ];
}

/** The chats of a plan, created in a sim; ids in plan order. */
export function createChats(sim: BotApiSim, plan: WritePlan): number[] {
  return plan.chats.map((chat, index) => {
    const user = sim.users.create({ firstName: `User ${index}` });
    return chat.type === "private"
      ? sim.chats.createPrivate(user).id
      : sim.chats.createSupergroup({ title: `Group ${index}`, members: [user] }).id;
  });
}

/** The text of progress state `step` of `steps`; the analysis reads `step` back. */
export function progressText(seq: number, step: number, steps: number): string {
  return `#${seq} Working… step ${step}/${steps} (${Math.floor((step * 100) / steps)}%)`;
}

/** Reads the step of a progress text, or undefined for another text. */
export function progressStep(text: string | undefined): number | undefined {
  const match = /^#\d+ Working… step (\d+)\//.exec(text ?? "");
  return match === null ? undefined : Number(match[1]);
}

/** Reads the `#seq` of any workload text. */
export function sequenceOf(text: string | undefined): number | undefined {
  const match = /^#(\d+) /.exec(text ?? "");
  return match === null ? undefined : Number(match[1]);
}

/** What happened in one stream, for the staleness figure. */
export interface StreamTrace {
  readonly chatId: number;
  readonly progress: SendRecord;
  /** Real time each state was produced (index = step; step 0 is the progress message itself). */
  readonly producedAt: number[];
  readonly final: SendRecord;
}

/** Everything a replay issued. */
export interface ReplayLog {
  readonly records: SendRecord[];
  readonly streams: StreamTrace[];
  /** Real time of the run's start. */
  readonly startedAt: number;
  /** Real time the last message was issued. */
  lastIssuedAt: number;
}

function at(realMs: number): Promise<void> {
  const wait = realMs - performance.now();
  return wait > 0 ? new Promise((resolve) => setTimeout(resolve, wait)) : Promise.resolve();
}

/** A replay under way. */
export interface Replay {
  readonly log: ReplayLog;
  /** Resolves once every message of the plan has been issued. */
  readonly issued: Promise<void>;
  /** Resolves once every message settled (delivered or failed). */
  readonly settled: Promise<void>;
}

function plannedMessages(plan: WritePlan): number {
  return plan.chats.reduce(
    (sum, chat) =>
      sum + (chat.isBroadcast ? 1 : 0) + chat.repliesAtMs.length + (chat.stream ? 2 : 0),
    0,
  );
}

/** Replays `plan` through `writer` in real time (`scale` Telegram ms per real ms). */
export function replay(
  plan: WritePlan,
  chatIds: readonly number[],
  writer: Writer,
  scale: number,
): Replay {
  const startedAt = performance.now();
  const real = (telegramMs: number): number => startedAt + telegramMs / scale;
  const log: ReplayLog = { records: [], streams: [], startedAt, lastIssuedAt: startedAt };
  const sequences = new Map<number, number>();
  const expected = plannedMessages(plan);
  let markIssued: () => void = () => {};
  const issued = new Promise<void>((resolve) => {
    markIssued = resolve;
  });
  if (expected === 0) markIssued();
  const record = (chatId: number, kind: SendRecord["kind"], text: (seq: number) => string) => {
    const seq = sequences.get(chatId) ?? 0;
    sequences.set(chatId, seq + 1);
    const entry: SendRecord = {
      chatId,
      seq,
      kind,
      text: text(seq),
      issuedAt: performance.now(),
      status: "pending",
      maybeDelivered: false,
    };
    log.records.push(entry);
    log.lastIssuedAt = Math.max(log.lastIssuedAt, entry.issuedAt);
    if (log.records.length === expected) markIssued();
    return entry;
  };
  const jobs = plan.chats.map(async (chat, index) => {
    const chatId = chatIds[index] as number;
    const tasks: Promise<void>[] = [];
    if (chat.isBroadcast) {
      tasks.push(
        writer.send(record(chatId, "broadcast", (seq) => `#${seq} News for chat ${chatId}`)),
      );
    }
    const reply = (seq: number) => `#${seq} Reply in chat ${chatId}`;
    if (plan.isHandler === true) {
      tasks.push(
        (async () => {
          for (const [index, replyAt] of chat.repliesAtMs.entries()) {
            await at(real(replyAt));
            const sent = record(chatId, "reply", reply);
            await writer.send(sent);
            if (sent.threw !== true) continue;
            // The handler stopped here: what it would have sent next is never sent.
            for (let rest = index + 1; rest < chat.repliesAtMs.length; rest++) {
              record(chatId, "reply", reply).status = "skipped";
            }
            return;
          }
        })(),
      );
    } else {
      for (const replyAt of chat.repliesAtMs) {
        tasks.push(
          (async () => {
            await at(real(replyAt));
            await writer.send(record(chatId, "reply", reply));
          })(),
        );
      }
    }
    const job = chat.stream;
    if (job !== undefined) {
      tasks.push(
        (async () => {
          const steps = Math.max(1, Math.round((job.durationMs * job.hz) / 1000));
          await at(real(job.startMs));
          const progress = record(chatId, "progress", (seq) => progressText(seq, 0, steps));
          const producedAt = [progress.issuedAt];
          let progressId: number | undefined;
          const sent = writer.send(progress).then(() => {
            progressId = progress.messageId;
          });
          for (let step = 1; step < steps; step++) {
            await at(real(job.startMs + (step * 1000) / job.hz));
            producedAt.push(performance.now());
            // States produced before the progress message exists have nothing to edit.
            if (progressId !== undefined) {
              writer.edit(chatId, progressId, progressText(progress.seq, step, steps));
            }
          }
          await at(real(job.startMs + job.durationMs));
          const final = record(
            chatId,
            "final",
            (seq) => `#${seq} Done: the job in chat ${chatId} finished`,
          );
          log.streams.push({ chatId, progress, producedAt, final });
          await writer.finish(final, progressId);
          await sent;
        })(),
      );
    }
    await Promise.all(tasks);
  });
  const settled = Promise.all(jobs).then(() => {});
  return { log, issued, settled };
}
