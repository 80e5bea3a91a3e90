// What Redis answers, classified: a wrong or missing password is ERR_REDIS_AUTH (never a script
// error, and the password appears nowhere), LOADING after a restart is ERR_REDIS_NOT_READY (the
// caller retries), a full Redis is ERR_REDIS_OUT_OF_MEMORY, and only a real script failure stays
// ERR_REDIS_SCRIPT.

import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type RedisTestServer, redisSuiteMode, startRedis } from "@telepace/testing";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RedisPacingStore, RedisStoreError, RedisUpdateQueue } from "../src/index.js";
import { message } from "./support/updates.js";

const PASSWORD = "s3cret-Pa55";
const run = redisSuiteMode(["Redis reply errors"]) === "run" ? describe : describe.skip;

/** The error a call rejects with, with everything a log would show of it. */
async function failureOf(call: Promise<unknown>): Promise<RedisStoreError> {
  const error = await call.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(RedisStoreError);
  return error as RedisStoreError;
}

/** Everything of an error a logger could print: message, stack, cause and its fields. */
function printed(error: Error): string {
  const cause = error.cause as Record<string, unknown> | undefined;
  return [error.message, error.stack, JSON.stringify(cause), String(cause?.stack)].join("\n");
}

run("Redis reply errors", () => {
  let secured: RedisTestServer;
  beforeAll(async () => {
    secured = await startRedis({ args: ["--requirepass", PASSWORD] });
  });
  afterAll(async () => {
    await secured.stop();
  });
  const withPassword = (password: string | undefined) =>
    `redis://${password === undefined ? "" : `:${password}@`}127.0.0.1:${secured.port}`;

  it("a wrong password is ERR_REDIS_AUTH, says what to check and never shows the password", async () => {
    const wrong = "wrong-Pa55word";
    const queue = new RedisUpdateQueue({ redis: withPassword(wrong), botId: 1 });
    const store = new RedisPacingStore({ redis: withPassword(wrong), botId: 1 });
    try {
      // Every call's failure is listened for as it starts: awaited one by one, a later call
      // could reject with nobody listening yet.
      const failures = [
        queue.append([message(1, 1)]),
        queue.claim("w", 1_000),
        queue.unfinished(),
        store.freeze("5", 1_000, 0),
      ].map(failureOf);
      for (const error of await Promise.all(failures)) {
        expect(error.code).toBe("ERR_REDIS_AUTH");
        // WRONGPASS, or NOAUTH for a command the client sent unauthenticated after the refusal.
        expect(error.message).toMatch(
          /^Redis refused the .+ \((WRONGPASS\): check the credentials|NOAUTH\): check the password) in the Redis URL$/,
        );
        expect(printed(error)).not.toContain(wrong);
        expect(printed(error)).not.toContain(PASSWORD);
      }
    } finally {
      await Promise.all([queue.close(), store.close()]);
    }
  });

  it("no password where one is asked is ERR_REDIS_AUTH (NOAUTH); the right one works", async () => {
    const none = new RedisUpdateQueue({ redis: withPassword(undefined), botId: 1 });
    const right = new RedisUpdateQueue({ redis: withPassword(PASSWORD), botId: 1 });
    try {
      const error = await failureOf(none.unfinished());
      expect(error.code).toBe("ERR_REDIS_AUTH");
      expect(error.message).toBe(
        "Redis refused the update queue read without a valid password (NOAUTH): check the password in the Redis URL",
      );
      expect(await right.unfinished()).toBe(0);
    } finally {
      await Promise.all([none.close(), right.close()]);
    }
  });

  it("a key of another program's type is still ERR_REDIS_SCRIPT", async () => {
    const queue = new RedisUpdateQueue({ redis: withPassword(PASSWORD), botId: 2 });
    const admin = new Redis(withPassword(PASSWORD));
    try {
      await admin.set(`${queue.namespace}:ready`, "not a sorted set");
      const error = await failureOf(queue.claim("w", 1_000));
      expect(error.code).toBe("ERR_REDIS_SCRIPT");
      expect(error.message).toContain("(WRONGTYPE); check that no other program writes");
    } finally {
      await admin.quit();
      await queue.close();
    }
  });

  it("LOADING while Redis reads its data after a restart is ERR_REDIS_NOT_READY, then it answers", async () => {
    const dir = mkdtempSync(join(tmpdir(), "telepace-loading-"));
    try {
      const first = await startRedis({ args: ["--dir", dir, "--enable-debug-command", "local"] });
      const admin = new Redis(first.url);
      await admin.call("DEBUG", "POPULATE", "20000");
      await admin.save();
      await admin.quit();
      await first.kill();
      // 100 µs per key: about 2 s of loading, answering LOADING meanwhile.
      const loading = await startRedis({
        port: first.port,
        args: [
          "--dir",
          dir,
          "--key-load-delay",
          "100",
          "--loading-process-events-interval-bytes",
          "1024",
        ],
      });
      const queue = new RedisUpdateQueue({ redis: loading.url, botId: 3 });
      try {
        const error = await failureOf(queue.unfinished());
        expect(error.code).toBe("ERR_REDIS_NOT_READY");
        expect(error.message).toBe(
          "Redis is loading its data after a restart and cannot run the update queue read yet (LOADING); retried until it is ready",
        );
        let answered = false;
        for (let tries = 0; tries < 200 && !answered; tries++) {
          answered = await queue.unfinished().then(
            () => true,
            async (caught: RedisStoreError) => {
              expect(caught.code).toBe("ERR_REDIS_NOT_READY");
              await new Promise((resolve) => setTimeout(resolve, 50));
              return false;
            },
          );
        }
        expect(answered).toBe(true);
      } finally {
        await queue.close();
        await loading.stop();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 30_000);

  it("a full Redis (maxmemory, noeviction) is ERR_REDIS_OUT_OF_MEMORY", async () => {
    const full = await startRedis({
      args: ["--maxmemory", "2mb", "--maxmemory-policy", "noeviction"],
    });
    const queue = new RedisUpdateQueue({ redis: full.url, botId: 4 });
    try {
      let error: RedisStoreError | undefined;
      for (let id = 1; id < 100 && error === undefined; id++) {
        error = await queue.append([message(id, id, "x".repeat(100_000))]).then(
          () => undefined,
          (caught: RedisStoreError) => caught,
        );
      }
      expect(error?.code).toBe("ERR_REDIS_OUT_OF_MEMORY");
      expect(error?.message).toContain("raise maxmemory or free memory");
    } finally {
      await queue.close();
      await full.stop();
    }
  });
});
