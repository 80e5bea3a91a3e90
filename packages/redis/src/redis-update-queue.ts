// RedisUpdateQueue: the update journal shared by every process of one bot. Intake appends (from
// the elected poller or any webhook), workers claim a ready principal, run its oldest update under
// a lease and complete it; per principal one update is in processing at a time, across all workers.

import { randomBytes } from "node:crypto";
import type { Update } from "@grammyjs/types";
import { checkNumber, checkOptions, describeValue } from "@telepace/core";
import { principalKeyOf } from "@telepace/update-dispatch";
import type { Redis } from "ioredis";
import { CLAIM_SCRIPT, COMPLETE_SCRIPT, HEARTBEAT_SCRIPT, OWNED_SCRIPT } from "./claim-scripts.js";
import { ScriptConnection } from "./connection.js";
import { durabilityOf, type RedisDurability } from "./durability.js";
import { checkBotOptions, type RedisBotOptions } from "./namespace.js";
import { APPEND_SCRIPT, LEASE_SCRIPT, RESTART_IDS_SCRIPT } from "./queue-scripts.js";

/** Options of {@link RedisUpdateQueue}. */
export interface RedisUpdateQueueOptions extends RedisBotOptions {
  /**
   * Most stored, unfinished updates; past it `append` stores no more (the poller waits).
   * Integer >= 1. @defaultValue 10000
   */
  readonly maxUnfinished?: number | undefined;
  /**
   * How many of the latest update ids are remembered to skip duplicates; at least
   * `maxUnfinished`. @defaultValue 100000
   */
  readonly dedupeLimit?: number | undefined;
}

/** Defaults of {@link RedisUpdateQueueOptions}. */
export const redisUpdateQueueDefaults = Object.freeze({
  prefix: "telepace",
  maxUnfinished: 10_000,
  dedupeLimit: 100_000,
});

/** What {@link RedisUpdateQueue.append} did. */
export interface QueueAppendResult {
  /** Updates stored by this call, in the order given. */
  readonly appended: readonly Update[];
  /** Updates skipped because their `update_id` was stored before. */
  readonly duplicates: number;
  /** Updates not stored because `maxUnfinished` were unfinished: fetch them again later. */
  readonly deferred: number;
  /** The highest `update_id` stored or skipped as a duplicate: confirm this + 1. */
  readonly highestUpdateId: number | undefined;
}

/** One update a worker holds the lease of (from {@link RedisUpdateQueue.claim}). */
export interface QueueClaim {
  /** The principal (see `principalKeyOf`); its other updates wait until this one completes. */
  readonly principal: string;
  readonly update: Update;
  /** How many times the update was claimed, this time included (more than 1: a hand-over). */
  readonly deliveries: number;
  /** Proves the lease in `complete` and `heartbeat`: `<worker id>:<claim id>`. */
  readonly token: string;
}

/** Options of one {@link RedisUpdateQueue.claim}. */
export interface QueueClaimOptions {
  /**
   * Names this claim (letters, digits, `_`, `-`; at most 64). Asking again with the same id after
   * a call whose answer was lost (a timeout while Redis stalled) answers the claim that call made,
   * if it made one, instead of leaving its principal leased to nobody for a lease. Use a fresh id
   * once a claim call has answered. @defaultValue a random id
   */
  readonly claimId?: string | undefined;
  /**
   * Most principals of one chat leased at once, over every worker (give all workers the same);
   * a chat's other principals wait until one of its leases ends, so one chat whose replies wait
   * (a 429's freeze, a group's 20 a minute) cannot hold every worker. 0: no bound.
   * Integer >= 0. @defaultValue 0
   */
  readonly maxPerChat?: number | undefined;
}

const CLAIM_OPTIONS = Object.keys({
  claimId: true,
  maxPerChat: true,
} satisfies Record<keyof QueueClaimOptions, true>);

const CLAIM_ID = /^[A-Za-z0-9_-]{1,64}$/;

const KNOWN = Object.keys({
  redis: true,
  botId: true,
  prefix: true,
  maxUnfinished: true,
  dedupeLimit: true,
} satisfies Record<keyof RedisUpdateQueueOptions, true>);

/**
 * Per-principal FIFO queues in Redis, shared by N workers: any worker takes any ready principal,
 * one update of a principal is in processing at a time (a lease with a TTL, extended by
 * heartbeats), a worker that dies hands its principals on when its leases expire (the
 * interrupted update first), at least once, idempotent by `update_id`, bounded.
 *
 * @example
 * const queue = new RedisUpdateQueue({ redis: "redis://127.0.0.1:6379", botId: 123456 });
 * await queue.append(updates); // the poller or a webhook
 * const claim = await queue.claim("worker-1", 30_000); // a worker
 * if (claim) { await handle(claim.update); await queue.complete(claim); }
 */
export class RedisUpdateQueue implements AsyncDisposable {
  readonly #connection: ScriptConnection;
  readonly #ns: string;
  readonly #maxUnfinished: number;
  readonly #dedupeLimit: number;

  /** @throws {TypeError|RangeError} naming the option, when options are malformed. */
  constructor(options: RedisUpdateQueueOptions) {
    if (options === undefined) {
      throw new TypeError(
        "Expected `options` to be an object with `redis` and `botId`, got undefined",
      );
    }
    const given = checkOptions("options", options, KNOWN);
    const { redis, namespace } = checkBotOptions<Redis>(given);
    this.#ns = `${namespace}:q`;
    const integer = (name: string, fallback: number, min: number) =>
      given[name] === undefined ? fallback : checkNumber(name, given[name], { integer: true, min });
    this.#maxUnfinished = integer("maxUnfinished", redisUpdateQueueDefaults.maxUnfinished, 1);
    this.#dedupeLimit = integer(
      "dedupeLimit",
      Math.max(redisUpdateQueueDefaults.dedupeLimit, this.#maxUnfinished),
      this.#maxUnfinished,
    );
    this.#connection = new ScriptConnection(redis);
  }

  /** The bot's key namespace (for leases that belong with the queue, like the poller's). */
  get namespace(): string {
    return this.#ns;
  }

  /**
   * Stores updates (idempotent by `update_id`) in ascending id order, until `maxUnfinished` are
   * unfinished. Resolves once Redis has them.
   */
  async append(updates: readonly Update[]): Promise<QueueAppendResult> {
    const sorted = [...updates].sort((a, b) => a.update_id - b.update_id);
    const args: (string | number)[] = [
      ...this.#keys("seen", "highest", "u", "ready", "leases", "count"),
      this.#maxUnfinished,
      this.#dedupeLimit,
      this.#listPrefix,
    ];
    for (const update of sorted) {
      args.push(update.update_id, principalKeyOf(update), JSON.stringify(update));
    }
    const reply = (await this.#connection.run(APPEND_SCRIPT, args, "update queue append")) as (
      | string
      | number
    )[];
    const storedIds = new Set(reply.slice(2).map(Number));
    const highest = Number(reply[1]);
    const appended = sorted.filter((update) => storedIds.has(update.update_id));
    const duplicates = Number(reply[0]);
    return Object.freeze({
      appended: Object.freeze(appended),
      duplicates,
      deferred: sorted.length - appended.length - duplicates,
      highestUpdateId: highest >= 0 ? highest : undefined,
    });
  }

  /**
   * Takes the ready principal with the oldest waiting update (whose chat has room under
   * `maxPerChat`) and leases it to `workerId` for `leaseMs`; principals whose leases expired are
   * handed back first. `undefined` when none is ready. Given the `claimId` of a call that did
   * not answer, answers the claim that call made (its lease extended), if it made one.
   */
  claim(
    workerId: string,
    leaseMs: number,
    options: QueueClaimOptions = {},
  ): Promise<QueueClaim | undefined> {
    const given = checkOptions("options", options, CLAIM_OPTIONS);
    const claimId = given.claimId ?? randomBytes(6).toString("base64url");
    if (typeof claimId !== "string" || !CLAIM_ID.test(claimId)) {
      throw new TypeError(
        `Expected \`claimId\` to be 1 to 64 letters, digits, "_" or "-", got ${describeValue(claimId)}`,
      );
    }
    const maxPerChat =
      given.maxPerChat === undefined
        ? 0
        : checkNumber("maxPerChat", given.maxPerChat, { integer: true, min: 0 });
    return this.#claim(`${workerId}:${claimId}`, leaseMs, maxPerChat);
  }

  async #claim(
    token: string,
    leaseMs: number,
    maxPerChat: number,
  ): Promise<QueueClaim | undefined> {
    const args = [
      ...this.#keys("ready", "leases", "owners", "claims", "chatload", "leasechat", "u"),
      ...this.#keys("deliveries"),
      this.#parkedPrefix,
      this.#listPrefix,
      Math.ceil(leaseMs),
      token,
      maxPerChat,
    ];
    const reply = (await this.#connection.run(CLAIM_SCRIPT, args, "update queue claim")) as (
      | string
      | number
    )[];
    if (reply.length < 5) return undefined;
    const [, principal, , json, deliveries] = reply;
    return Object.freeze({
      principal: String(principal),
      update: JSON.parse(String(json)) as Update,
      deliveries: Number(deliveries),
      token,
    });
  }

  /**
   * Finishes a claimed update (succeeded, failed: anything that must not run again) and releases
   * its principal. Resolves `true` when it is finished — by this call, or by an earlier call for
   * the same claim whose answer was lost — and `false` when the lease had been lost: the update
   * runs (or ran) again elsewhere.
   */
  async complete(claim: QueueClaim): Promise<boolean> {
    const args = [
      ...this.#keys("ready", "leases", "owners", "claims", "chatload", "leasechat", "u"),
      ...this.#keys("deliveries", "count", "completed"),
      this.#parkedPrefix,
      this.#listPrefix,
      claim.principal,
      claim.token,
      claim.update.update_id,
    ];
    return (await this.#connection.run(COMPLETE_SCRIPT, args, "update queue complete")) === 1;
  }

  /** Extends the leases of claims still held; resolves, per claim, whether it is still held. */
  async heartbeat(claims: readonly QueueClaim[], leaseMs: number): Promise<readonly boolean[]> {
    if (claims.length === 0) return [];
    const args: (string | number)[] = [...this.#keys("leases", "owners"), Math.ceil(leaseMs)];
    for (const claim of claims) args.push(claim.principal, claim.token);
    const reply = (await this.#connection.run(
      HEARTBEAT_SCRIPT,
      args,
      "update queue heartbeat",
    )) as number[];
    return reply.map((held) => held === 1);
  }

  /** The highest `update_id` ever stored; a poller confirms this + 1. */
  async highestUpdateId(): Promise<number | undefined> {
    const value = await this.#command(() => this.#connection.client.get(`${this.#ns}:highest`));
    return value === null ? undefined : Number(value);
  }

  /**
   * Forgets every stored update id (the ones kept to skip duplicates) and the highest one, for a
   * new numbering of update ids: Telegram picks the next id at random after a week without
   * updates, often below the last, and the old ids would hide the new updates as duplicates or
   * keep the poller's offset in the future. Resolves `false`, changing nothing, while a stored
   * update is unfinished (a new id could collide with it); `true` once forgotten. The elected
   * `SharedPoller` calls it when it sees the ids restart.
   */
  async restartIds(): Promise<boolean> {
    const args = this.#keys("seen", "highest", "count");
    return (
      (await this.#connection.run(RESTART_IDS_SCRIPT, args, "update queue restart of ids")) === 1
    );
  }

  /** Stored updates not completed yet. */
  async unfinished(): Promise<number> {
    const value = await this.#command(() => this.#connection.client.get(`${this.#ns}:count`));
    return value === null ? 0 : Number(value);
  }

  /**
   * How many principals `workerId` holds: leased to it, or leased and expired with no other worker
   * having taken them over yet (a crashed worker's stay its own until a claim hands them on).
   */
  async ownedBy(workerId: string): Promise<number> {
    const tokens = await this.#command(() => this.#connection.client.hvals(`${this.#ns}:owners`));
    // A token is `<worker id>:<counter>`; a worker id may itself hold colons.
    return tokens.filter((token) => token.slice(0, token.lastIndexOf(":")) === workerId).length;
  }

  /**
   * The update each principal `workerId` holds is at (see {@link ownedBy}): what it was running
   * when it stopped, for a report after a crash.
   */
  async updatesOwnedBy(workerId: string): Promise<readonly Update[]> {
    const reply = (await this.#connection.run(
      OWNED_SCRIPT,
      [...this.#keys("owners", "u"), this.#listPrefix, workerId],
      "update queue read",
    )) as string[];
    const updates: Update[] = [];
    for (let i = 1; i < reply.length; i += 2)
      updates.push(JSON.parse(reply[i] as string) as Update);
    return Object.freeze(updates);
  }

  /**
   * How the server keeps what it acknowledged (append-only file, eviction), and what the
   * guarantees lack there: check it at start and warn, or refuse, on `problems`. Works where
   * CONFIG is disabled (those settings are then `unchecked`).
   * @throws {RedisStoreError} when Redis cannot be reached or refuses the credentials.
   */
  checkDurability(): Promise<RedisDurability> {
    return this.#connection.command(
      () => durabilityOf(this.#connection.client),
      "durability check",
    );
  }

  /** Whether `append` would store at least one more update now. */
  async hasRoom(): Promise<boolean> {
    return (await this.unfinished()) < this.#maxUnfinished;
  }

  /**
   * A named lease in this bot's namespace (`take`, `renew`, `release`), for the elected poller.
   * @internal
   */
  async lease(name: string, token: string, leaseMs: number, mode: "take" | "renew" | "release") {
    const args = [`${this.#ns}:lease:${name}`, token, Math.ceil(leaseMs), mode];
    return (await this.#connection.run(LEASE_SCRIPT, args, `${name} lease`)) === 1;
  }

  /** Quits the client the queue created (a given client is left open). Idempotent. */
  close(): Promise<void> {
    return this.#connection.close();
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }

  get #listPrefix(): string {
    return `${this.#ns}:p:`;
  }

  get #parkedPrefix(): string {
    return `${this.#ns}:parked:`;
  }

  #keys(...names: string[]): string[] {
    return names.map((name) => `${this.#ns}:${name}`);
  }

  async #command<T>(run: () => Promise<T>): Promise<T> {
    return this.#connection.command(run, "update queue read");
  }
}
