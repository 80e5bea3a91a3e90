// RedisBroadcastStore: @telepace/broadcast's BroadcastStore shared by every process of one bot.
// Batches are leased on Redis time and every write of a batch checks its lease's token, so a
// process that died (or stalled past its lease) loses its batch to the next claim and can no
// longer write to it.

import { randomUUID } from "node:crypto";
import {
  type BatchClaim,
  type BroadcastCounts,
  type BroadcastDefinition,
  BroadcastError,
  type BroadcastRecord,
  type BroadcastState,
  type BroadcastStore,
  type ClaimResult,
  type PositionRecord,
} from "@telepace/broadcast";
import { checkOptions } from "@telepace/core";
import type { Redis } from "ioredis";
import {
  CLAIM_SCRIPT,
  COMPLETE_SCRIPT,
  MARK_SCRIPT,
  OPEN_SCRIPT,
  READ_SCRIPT,
  RELEASE_SCRIPT,
  RENEW_SCRIPT,
  STATE_SCRIPT,
} from "./broadcast-scripts.js";
import { ScriptConnection, type ScriptSource } from "./connection.js";
import { checkBotId, checkPrefix, checkRedis, namespaceOf } from "./namespace.js";

/** Options of {@link RedisBroadcastStore}. */
export interface RedisBroadcastStoreOptions {
  /** A `redis://` / `rediss://` URL (the store makes and closes its client), or an ioredis client. */
  readonly redis: string | Redis;
  /** The bot's id (`botIdOf(token)`): its broadcasts live under it. */
  readonly botId: number | string;
  /** Key prefix. @defaultValue "telepace" */
  readonly prefix?: string | undefined;
}

const COUNT_KEYS: readonly (keyof BroadcastCounts)[] = [
  "sent",
  "blocked",
  "deactivated",
  "forbidden",
  "chatNotFound",
  "maybeDelivered",
  "failed",
  "migrated",
  "resentAfterCrash",
];
const STATES: readonly BroadcastState[] = ["running", "paused", "cancelled", "completed"];

function corrupt(id: string): BroadcastError {
  return new BroadcastError(
    "ERR_BROADCAST_CORRUPT",
    `The broadcast "${id}" in Redis has a field this version cannot read`,
  );
}

/** A broadcast's fields (a flat HGETALL list, plus `open`) as a record. */
function recordOf(id: string, reply: unknown, from = 0): BroadcastRecord {
  if (!Array.isArray(reply)) throw corrupt(id);
  const fields = new Map<string, string>();
  for (let i = from; i + 1 < reply.length; i += 2) {
    fields.set(String(reply[i]), String(reply[i + 1]));
  }
  const number = (name: string, fallback?: number): number => {
    const raw = fields.get(name);
    const value = raw === undefined ? fallback : Number(raw);
    if (value === undefined || !Number.isSafeInteger(value) || value < 0) throw corrupt(id);
    return value;
  };
  const counts = Object.fromEntries(COUNT_KEYS.map((key) => [key, number(`c:${key}`, 0)]));
  const state = fields.get("state") as BroadcastState;
  const end = fields.get("end");
  if (!STATES.includes(state) || fields.get("fp") === undefined) throw corrupt(id);
  return Object.freeze({
    id,
    fingerprint: fields.get("fp") as string,
    batchSize: number("size"),
    state,
    end: end === undefined || end === "" ? undefined : number("end"),
    nextBatch: number("next"),
    counts: Object.freeze(counts) as unknown as BroadcastCounts,
    openBatches: number("open"),
  });
}

/**
 * A `BroadcastStore` of `@telepace/broadcast` in Redis: give every process's `BroadcastRegistry`
 * one, with the same `botId`, and they run a broadcast together — each claims batches of
 * recipients with a lease, a killed process's batch is taken over when its lease runs out, and
 * the counts are the broadcast's as a whole.
 *
 * @example
 * const store = new RedisBroadcastStore({ redis: process.env.REDIS_URL!, botId: botIdOf(token) });
 * const broadcasts = new BroadcastRegistry({ client, store });
 */
export class RedisBroadcastStore implements BroadcastStore, AsyncDisposable {
  /** Several processes share a broadcast through it. */
  readonly isShared = true;
  readonly #connection: ScriptConnection;
  readonly #ns: string;

  /** @throws {TypeError} naming the option, when options are malformed. */
  constructor(options: RedisBroadcastStoreOptions) {
    const given = checkOptions("options", options, ["redis", "botId", "prefix"]);
    this.#connection = new ScriptConnection(checkRedis<Redis>(given.redis));
    this.#ns = `${namespaceOf(checkPrefix(given.prefix), checkBotId(given.botId))}:bc`;
  }

  async open(id: string, definition: BroadcastDefinition): Promise<BroadcastRecord> {
    const reply = await this.#run(OPEN_SCRIPT, [
      ...this.#keys(id, "meta", "leases"),
      definition.fingerprint,
      String(definition.batchSize),
      definition.end === undefined ? "" : String(definition.end),
    ]);
    if (Array.isArray(reply) && reply[0] === "conflict") {
      throw new BroadcastError(
        "ERR_BROADCAST_CONFLICT",
        `Broadcast "${id}" exists with another message: start it with the same message, or use a new id`,
      );
    }
    return recordOf(id, reply);
  }

  async read(id: string): Promise<BroadcastRecord | undefined> {
    const reply = await this.#run(READ_SCRIPT, this.#keys(id, "meta", "leases"));
    return Array.isArray(reply) && reply.length === 0 ? undefined : recordOf(id, reply);
  }

  async claim(id: string, _worker: string, leaseMs: number): Promise<ClaimResult> {
    const token = randomUUID();
    const reply = await this.#run(CLAIM_SCRIPT, [
      ...this.#keys(id, "meta", "leases", "owners"),
      token,
      String(Math.ceil(leaseMs)),
      `${this.#ns}:${id}:b:`,
    ]);
    if (!Array.isArray(reply)) throw corrupt(id);
    switch (reply[0]) {
      case "claimed": {
        const batch = Number(reply[1]);
        const size = Number(reply[2]);
        const recorded = new Map<number, PositionRecord>();
        for (let i = 3; i + 1 < reply.length; i += 2) {
          recorded.set(Number(reply[i]), String(reply[i + 1]));
        }
        const from = batch * size;
        return { status: "claimed", claim: { id, batch, from, to: from + size, token, recorded } };
      }
      case "wait":
        return { status: "wait", retryInMs: Number(reply[1]), record: recordOf(id, reply, 2) };
      case "stopped":
        return { status: "stopped", record: recordOf(id, reply, 1) };
      default:
        throw new RangeError(`No broadcast "${id}" in this store`);
    }
  }

  async renew(claim: BatchClaim, leaseMs: number): Promise<boolean> {
    const reply = await this.#run(RENEW_SCRIPT, [
      ...this.#keys(claim.id, "leases", "owners"),
      String(claim.batch),
      claim.token,
      String(Math.ceil(leaseMs)),
    ]);
    return reply === 1;
  }

  markStarted(claim: BatchClaim, position: number): Promise<void> {
    return this.#mark(claim, position, "s");
  }

  markUnsent(claim: BatchClaim, position: number): Promise<void> {
    return this.#mark(claim, position, "");
  }

  markSettled(claim: BatchClaim, position: number, record: PositionRecord): Promise<void> {
    return this.#mark(claim, position, record);
  }

  async complete(claim: BatchClaim, end: number | undefined): Promise<BroadcastRecord> {
    const reply = await this.#run(COMPLETE_SCRIPT, [
      ...this.#keys(claim.id, "meta", "leases", "owners"),
      this.#batchKey(claim),
      String(claim.batch),
      claim.token,
      end === undefined ? "" : String(end),
    ]);
    if (Array.isArray(reply) && reply[0] === "lost") throw this.#lost(claim);
    return recordOf(claim.id, reply);
  }

  async release(claim: BatchClaim): Promise<void> {
    await this.#run(RELEASE_SCRIPT, [
      ...this.#keys(claim.id, "leases", "owners"),
      String(claim.batch),
      claim.token,
    ]);
  }

  async setState(id: string, state: "running" | "paused" | "cancelled"): Promise<BroadcastRecord> {
    const reply = await this.#run(STATE_SCRIPT, [...this.#keys(id, "meta", "leases"), state]);
    if (Array.isArray(reply) && reply[0] === "missing") {
      throw new RangeError(`No broadcast "${id}" in this store`);
    }
    return recordOf(id, reply);
  }

  /** Quits the client the store created (a given client is left open). Idempotent. */
  close(): Promise<void> {
    return this.#connection.close();
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }

  async #mark(claim: BatchClaim, position: number, record: string): Promise<void> {
    const reply = await this.#run(MARK_SCRIPT, [
      `${this.#ns}:${claim.id}:owners`,
      this.#batchKey(claim),
      String(claim.batch),
      claim.token,
      String(position),
      record,
    ]);
    if (reply === "lost") throw this.#lost(claim);
  }

  #lost(claim: BatchClaim): BroadcastError {
    return new BroadcastError(
      "ERR_BROADCAST_LEASE_LOST",
      `Batch ${claim.batch} of broadcast "${claim.id}" was taken over: its lease ran out`,
    );
  }

  #keys(id: string, ...names: ("meta" | "leases" | "owners")[]): string[] {
    return names.map((name) =>
      name === "meta" ? `${this.#ns}:${id}` : `${this.#ns}:${id}:${name}`,
    );
  }

  #batchKey(claim: BatchClaim): string {
    return `${this.#ns}:${claim.id}:b:${claim.batch}`;
  }

  #run(script: ScriptSource, args: readonly string[]): Promise<unknown> {
    return this.#connection.run(script, args, "broadcast store");
  }
}
