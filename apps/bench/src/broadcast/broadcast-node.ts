// One bot process of the crash runs: a paid broadcast of the recipients in `recipientsFile`, its
// progress in a FileUpdateJournal (`store: "file"`) or shared with other processes through Redis
// (`store: "redis"`, paced through Redis too). Reports to its parent over IPC: recipients settled,
// each one sent again after a crash, and the final report. Configured by TELEPACE_BROADCAST_NODE.

import diagnosticsChannel from "node:diagnostics_channel";
import { readFile } from "node:fs/promises";
import {
  type BroadcastEvent,
  BroadcastRegistry,
  type BroadcastReport,
  type BroadcastStore,
  broadcastChannels,
  JournalBroadcastStore,
} from "@telepace/broadcast";
import { TelegramClient } from "@telepace/client";
import { FileUpdateJournal } from "@telepace/journal-file";
import { botIdOf, RedisBroadcastStore, RedisPacingStore } from "@telepace/redis";

export interface NodeConfig {
  readonly store: "file" | "redis";
  /** The journal's directory (`file`) or the Redis URL (`redis`). */
  readonly where: string;
  readonly apiRoot: string;
  readonly token: string;
  readonly recipientsFile: string;
  readonly workerId: string;
}

/** What a node tells its parent. */
export type NodeMessage =
  | { readonly type: "loaded" }
  | { readonly type: "settled"; readonly settled: number }
  | { readonly type: "resent"; readonly chatId: number }
  | { readonly type: "report"; readonly report: BroadcastReport };

const config = JSON.parse(process.env.TELEPACE_BROADCAST_NODE ?? "{}") as NodeConfig;
const tell = (message: NodeMessage) => process.send?.(message);
// Loaded, the process waits for its parent's go: a process that takes over after a kill can be
// started beforehand, so the kill is not followed by seconds of Node starting.
const go = new Promise<void>((resolve) => {
  process.on("message", (message: { type?: string }) => {
    if (message.type === "go") resolve();
  });
});
tell({ type: "loaded" });
await go;
const recipients = JSON.parse(await readFile(config.recipientsFile, "utf8")) as number[];
const botId = botIdOf(config.token);
const pacingStore =
  config.store === "redis" ? new RedisPacingStore({ redis: config.where, botId }) : undefined;
const journal = config.store === "file" ? await FileUpdateJournal.open(config.where) : undefined;
const store: BroadcastStore =
  journal === undefined
    ? new RedisBroadcastStore({ redis: config.where, botId })
    : new JournalBroadcastStore(journal);
const client = new TelegramClient({
  token: config.token,
  apiRoot: config.apiRoot,
  outbox: { maxInFlight: 64, ...(pacingStore === undefined ? {} : { pacingStore }) },
});
const registry = new BroadcastRegistry({ client, store, workerId: config.workerId });

let settled = 0;
diagnosticsChannel.subscribe(broadcastChannels.settled, (message) => {
  const event = message as BroadcastEvent;
  if (event.type !== "settled") return;
  if (event.resent && typeof event.chatId === "number")
    tell({ type: "resent", chatId: event.chatId });
  settled++;
  if (settled % 25 === 0) tell({ type: "settled", settled });
});

const job = registry.start("crash", {
  message: { method: "sendMessage", params: { text: "One message, whatever happens" } },
  recipients,
  paid: true,
  leaseMs: 2_000,
});
const report = await job.result;
await registry.close();
await client.close();
await journal?.close();
if (store instanceof RedisBroadcastStore) await store.close();
await pacingStore?.close();
tell({ type: "report", report: JSON.parse(JSON.stringify(report)) as BroadcastReport });
process.removeAllListeners("message");
process.disconnect?.();
