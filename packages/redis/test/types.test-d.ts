// The public types of the Redis package, checked by the compiler (vitest's typecheck): the store
// is an outbox PacingStore, the queue's results are readonly, options are readonly with unknown
// keys refused, and the worker's processor gets an update and a signal.

import type { Update } from "@grammyjs/types";
import type { PacingStore, TelegramOutboxOptions } from "@telepace/outbox";
import type { Redis } from "ioredis";
import { describe, expectTypeOf, it } from "vitest";
import {
  type JobCancelAnswer,
  type QueueAppendResult,
  type QueueClaim,
  type RedisDurability,
  RedisJobRegistry,
  RedisPacingStore,
  type RedisPacingStoreOptions,
  type RedisStoreError,
  type RedisStoreErrorCode,
  type RedisUpdateQueue,
  SharedUpdateWorker,
} from "../src/index.js";

declare const queue: RedisUpdateQueue;

describe("@telepace/redis", () => {
  it("gives the outbox a PacingStore", () => {
    expectTypeOf<RedisPacingStore>().toExtend<PacingStore>();
    expectTypeOf<RedisPacingStore>().toExtend<NonNullable<TelegramOutboxOptions["pacingStore"]>>();
    expectTypeOf<RedisPacingStoreOptions["redis"]>().toEqualTypeOf<Redis | string>();
    // @ts-expect-error the bot id is required: it scopes the keys
    new RedisPacingStore({ redis: "redis://localhost" });
    // @ts-expect-error a misspelt option
    new RedisPacingStore({ redis: "redis://localhost", botId: 1, prefx: "x" });
  });

  it("answers the queue's calls with readonly results", () => {
    expectTypeOf(queue.append([])).toEqualTypeOf<Promise<QueueAppendResult>>();
    expectTypeOf(queue.claim("w", 1_000)).toEqualTypeOf<Promise<QueueClaim | undefined>>();
    expectTypeOf(queue.claim("w", 1_000, { claimId: "a", maxPerChat: 8 })).toEqualTypeOf<
      Promise<QueueClaim | undefined>
    >();
    // @ts-expect-error a misspelt claim option
    void queue.claim("w", 1_000, { claimID: "a" });
    expectTypeOf(queue.checkDurability()).toEqualTypeOf<Promise<RedisDurability>>();
    expectTypeOf<RedisDurability["problems"]>().toEqualTypeOf<readonly string[]>();
    const claim = {} as QueueClaim;
    expectTypeOf(claim.update).toEqualTypeOf<Update>();
    // @ts-expect-error a claim is read, never written
    claim.deliveries = 0;
  });

  it("keeps jobs whose cancel answers are a closed union", () => {
    const jobs = new RedisJobRegistry({ redis: "redis://localhost", botId: 1 });
    expectTypeOf(jobs.requestCancel("id", 7)).toEqualTypeOf<Promise<JobCancelAnswer>>();
    expectTypeOf<JobCancelAnswer>().toEqualTypeOf<"requested" | "not-found" | "not-allowed">();
    // @ts-expect-error a record is a JSON value
    void jobs.add("id", () => {});
  });

  it("runs a processor of an update and a signal", () => {
    new SharedUpdateWorker(queue, (update, signal) => {
      expectTypeOf(update).toEqualTypeOf<Update>();
      expectTypeOf(signal).toEqualTypeOf<AbortSignal>();
    });
    expectTypeOf<RedisStoreError["code"]>().toEqualTypeOf<RedisStoreErrorCode>();
  });
});
