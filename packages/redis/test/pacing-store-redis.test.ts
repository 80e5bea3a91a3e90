import { ManualClock, systemClock } from "@telepace/core";
import { TelegramOutbox } from "@telepace/outbox";
import { describeWithRedis, eventually, spyLogger, startRedis } from "@telepace/testing";
import { Redis } from "ioredis";
import { afterEach, describe, expect, it } from "vitest";
import { botIdOf, RedisPacingStore, RedisStoreError } from "../src/index.js";

const request = {
  chatKey: "42",
  intervalMs: 1_000,
  chatLimit: 0,
  chatWindowMs: 0,
  chatReserve: 0,
  paced: true,
  globalLimit: 30,
  globalWindowMs: 1_000,
  nowMs: 0,
};

const closers: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

describeWithRedis("RedisPacingStore on Redis time", (server) => {
  it("decides on the server's clock: the caller's nowMs does not matter", async () => {
    const store = new RedisPacingStore({ redis: server().url, botId: 9001 });
    closers.push(() => store.close());
    expect(await store.acquire({ ...request, nowMs: 0 })).toEqual({ granted: true });
    const denied = await store.acquire({ ...request, nowMs: 1e12 });
    expect(denied).toMatchObject({ granted: false, reason: "chat-paced" });
    expect(denied.granted === false && denied.waitMs).toBeGreaterThan(900);
    expect(denied.granted === false && denied.waitMs).toBeLessThanOrEqual(1_000);
    await store.freeze(undefined, 5_000, 0);
    const frozen = await store.acquire({ ...request, chatKey: "43", nowMs: 0 });
    expect(frozen).toMatchObject({ granted: false, reason: "global-frozen" });
    expect(store.snapshot()).toEqual({
      granted: 1,
      reserved: 0,
      denied: 2,
      failures: 0,
      isReachable: true,
    });
  });

  it("reserves the next global slot on Redis time, shared by every process", async () => {
    const a = new RedisPacingStore({ redis: server().url, botId: 9010 });
    const b = new RedisPacingStore({ redis: server().url, botId: 9010 });
    closers.push(
      () => a.close(),
      () => b.close(),
    );
    expect(a.reserveAheadMs).toBe(1_000);
    const one = { ...request, intervalMs: 0, globalLimit: 1, chatKey: undefined };
    expect(await a.acquire({ ...one, nowMs: 1e12 })).toEqual({ granted: true });
    // The window is full for about a second from Redis's now, whatever the caller's clock says.
    const reserved = await b.acquire({ ...one, nowMs: 0, maxStartInMs: 1_500 });
    const startInMs = reserved.granted ? (reserved.startInMs ?? 0) : 0;
    expect(startInMs).toBeGreaterThan(900);
    expect(startInMs).toBeLessThanOrEqual(1_000);
    // The reserved slot counts for everyone: the next one is a second after it.
    const next = await a.acquire({ ...one, maxStartInMs: 500 });
    expect(next).toMatchObject({ granted: false, reason: "global-budget" });
    const waitMs = next.granted ? 0 : next.waitMs;
    expect(waitMs).toBeGreaterThan(startInMs + 1_000 - 500 - 100);
    expect(waitMs).toBeLessThanOrEqual(startInMs + 1_000 - 500);
    expect(b.snapshot()).toMatchObject({ granted: 1, reserved: 1 });
  });

  it("two stores (two processes) with one bot id share every limit; another bot id does not", async () => {
    const a = new RedisPacingStore({ redis: server().url, botId: 9002 });
    const b = new RedisPacingStore({ redis: server().url, botId: 9002 });
    const other = new RedisPacingStore({ redis: server().url, botId: 9003 });
    closers.push(
      () => a.close(),
      () => b.close(),
      () => other.close(),
    );
    expect(await a.acquire(request)).toEqual({ granted: true });
    expect(await b.acquire(request)).toMatchObject({ granted: false, reason: "chat-paced" });
    expect(await other.acquire(request)).toEqual({ granted: true });
  });

  it("widens each process's global window to the widest another asked with lately", async () => {
    const a = new RedisPacingStore({ redis: server().url, botId: 9040, time: "caller" });
    const b = new RedisPacingStore({ redis: server().url, botId: 9040, time: "caller" });
    closers.push(
      () => a.close(),
      () => b.close(),
    );
    const one = { ...request, chatKey: undefined, intervalMs: 0, globalLimit: 1 };
    // a's requests reach Telegram late: it asks with a 1_100 ms window (a 100 ms margin).
    expect(await a.acquire({ ...one, globalWindowMs: 1_100, nowMs: 0 })).toEqual({
      granted: true,
    });
    // b's own 1_000 ms window would allow a start at 1_050; a's start may have arrived late, so
    // b waits for a's window.
    expect(await b.acquire({ ...one, globalWindowMs: 1_000, nowMs: 1_050 })).toEqual({
      granted: false,
      waitMs: 50,
      reason: "global-budget",
    });
    expect(await b.acquire({ ...one, globalWindowMs: 1_000, nowMs: 1_100 })).toEqual({
      granted: true,
    });
    // A process's own narrower window applies at once: a now asks with 1_000, b's was 1_000.
    expect(await a.acquire({ ...one, globalWindowMs: 1_000, nowMs: 2_100 })).toEqual({
      granted: true,
    });
    expect(await a.acquire({ ...one, globalWindowMs: 1_000, nowMs: 3_200 })).toEqual({
      granted: true,
    });
    // a slows down (1_500) at 3_300: b's next start keeps clear of a's start by that much.
    expect(await a.acquire({ ...one, globalWindowMs: 1_500, nowMs: 3_300 })).toMatchObject({
      granted: false,
    });
    expect(await b.acquire({ ...one, globalWindowMs: 1_000, nowMs: 4_300 })).toEqual({
      granted: false,
      waitMs: 400,
      reason: "global-budget",
    });
    // More than 5 s after a last asked, its window no longer widens b's.
    expect(await b.acquire({ ...one, globalWindowMs: 1_000, nowMs: 8_400 })).toEqual({
      granted: true,
    });
    expect(await b.acquire({ ...one, globalWindowMs: 1_000, nowMs: 9_450 })).toEqual({
      granted: true,
    });
  });

  it("tells every process of a freeze as Redis publishes it, with how long it still lasts", async () => {
    const a = new RedisPacingStore({ redis: server().url, botId: 9030, time: "caller" });
    const b = new RedisPacingStore({ redis: server().url, botId: 9030, time: "caller" });
    const otherBot = new RedisPacingStore({ redis: server().url, botId: 9031, time: "caller" });
    const off = new RedisPacingStore({ redis: server().url, botId: 9030, reserveAheadMs: 0 });
    closers.push(
      () => a.close(),
      () => b.close(),
      () => otherBot.close(),
      () => off.close(),
    );
    const heard: [string | undefined, number][] = [];
    a.onFreeze((chatKey, durationMs) => heard.push([chatKey, durationMs]));
    const unheard: unknown[] = [];
    otherBot.onFreeze((...freeze) => unheard.push(freeze));
    off.onFreeze((...freeze) => unheard.push(freeze));
    const redis = new Redis(server().url);
    closers.push(() => redis.quit());
    const channel = "telepace:{9030}:pace:freezes";
    // One subscriber for the bot (a's); the store with reservations off opens none.
    await eventually("a subscribed", async () => {
      const [, subscribers] = (await redis.pubsub("NUMSUB", channel)) as [string, number];
      return subscribers === 1;
    });
    await b.freeze("42", 3_000, 0);
    // A shorter freeze never shortens a longer one: the report says what is left of the longer.
    await b.freeze("42", 1_000, 500);
    // A freeze of 0 ms (retry_after 0) is over already and is not published.
    await b.freeze("42", 0, 10_000);
    await b.freeze(undefined, 5_000, 0);
    await eventually("three freezes heard", () => heard.length === 3);
    expect(heard).toEqual([
      ["42", 3_000],
      ["42", 2_500],
      [undefined, 5_000],
    ]);
    expect(unheard).toEqual([]);
    await a.close();
    await eventually("a's subscriber gone", async () => {
      const [, subscribers] = (await redis.pubsub("NUMSUB", channel)) as [string, number];
      return subscribers === 0;
    });
  });

  it("an outbox leaves a slot reserved ahead unused when another process is frozen meanwhile", async () => {
    const a = new RedisPacingStore({ redis: server().url, botId: 9032, time: "caller" });
    const b = new RedisPacingStore({ redis: server().url, botId: 9032, time: "caller" });
    closers.push(
      () => a.close(),
      () => b.close(),
    );
    const clock = new ManualClock();
    const outbox = new TelegramOutbox({
      clock,
      pacingStore: a,
      globalRps: 1,
      privateChatRps: 0,
      groupChatRps: 0,
      pacingMarginMs: 0,
    });
    closers.push(() => outbox.close({ drain: false }));
    const sent: [string, number][] = [];
    const send = (label: string) => async () => sent.push([label, clock.now()]);
    outbox.enqueue({ chatId: 1, execute: send("a") });
    await eventually("a sent", () => sent.length === 1);
    outbox.enqueue({ chatId: 2, execute: send("b") });
    // b is told to come back at 750 (a quarter of reserveAheadMs before the slot), and then
    // reserves the slot at 1_000.
    await eventually("b told to wait", () => a.snapshot().denied === 1);
    await clock.advance(800);
    await eventually("b's slot reserved", () => a.snapshot().reserved === 1);
    // Another process of the bot hits a 429 with retry_after 3 s at 800.
    await b.freeze(undefined, 3_000, 800);
    await eventually("the freeze heard", () => outbox.snapshot().globalFrozenForMs > 0);
    await clock.advance(1_000);
    expect(sent).toEqual([["a", 0]]);
    await clock.advance(2_000);
    await eventually("b sent after the freeze", () => sent.length === 2);
    expect(sent).toEqual([
      ["a", 0],
      ["b", 3_800],
    ]);
  });

  it("names keys by prefix and bot id, never the token, and lets chat keys expire", async () => {
    const token = "123456:SECRET-token-part";
    const store = new RedisPacingStore({
      redis: server().url,
      botId: botIdOf(token),
      prefix: "t1",
    });
    closers.push(() => store.close());
    await store.acquire(request);
    await store.freeze("42", 2_000, 0);
    const redis = new Redis(server().url);
    closers.push(() => redis.quit());
    const keys = await redis.keys("*");
    const ours = keys.filter((key) => key.startsWith("t1:"));
    expect(ours.length).toBeGreaterThan(0);
    for (const key of ours) {
      expect(key.startsWith("t1:{123456}:pace:")).toBe(true);
      expect(key).not.toContain("SECRET");
      const ttl = await redis.pttl(key);
      if (key.includes(":c:")) expect(ttl).toBeGreaterThan(0);
    }
  });

  it("runs its scripts again after Redis forgot them (SCRIPT FLUSH: NOSCRIPT then EVAL)", async () => {
    const store = new RedisPacingStore({ redis: server().url, botId: 9004 });
    closers.push(() => store.close());
    expect(await store.acquire(request)).toEqual({ granted: true });
    const redis = new Redis(server().url);
    closers.push(() => redis.quit());
    await redis.script("FLUSH");
    expect(await store.acquire({ ...request, chatKey: "7" })).toEqual({ granted: true });
  });

  it("with Redis down the outbox sends nothing, logs and backs off; it goes on once Redis is back", async () => {
    const spare = await startRedis();
    const port = spare.port;
    await spare.stop();
    const store = new RedisPacingStore({ redis: `redis://127.0.0.1:${port}`, botId: 9005 });
    closers.push(() => store.close());
    const logger = spyLogger();
    const outbox = new TelegramOutbox({
      clock: systemClock,
      pacingStore: store,
      retryBaseDelayMs: 20,
      retryMaxDelayMs: 200,
      logger,
    });
    closers.push(() => outbox.close({ drain: false }));
    const sent: number[] = [];
    const delivered = outbox.enqueue({ chatId: 1, execute: async () => sent.push(1) });
    await eventually("two failures", () => outbox.snapshot().counters.pacingStoreFailures >= 2);
    expect(sent).toEqual([]);
    expect(store.snapshot().isReachable).toBe(false);
    expect(logger.calls.some((c) => c.message === "outbox pacing store failed")).toBe(true);
    const again = await startRedis({ port });
    closers.push(() => again.stop());
    expect((await delivered).status).toBe("delivered");
    expect(sent).toEqual([1]);
    expect(store.snapshot().isReachable).toBe(true);
  });

  it("says what to do when Redis is unreachable", async () => {
    const spare = await startRedis();
    await spare.stop();
    const store = new RedisPacingStore({ redis: `redis://127.0.0.1:${spare.port}`, botId: 9006 });
    closers.push(() => store.close());
    const error = await store.acquire(request).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RedisStoreError);
    expect(error).toMatchObject({ code: "ERR_REDIS_CONNECTION" });
    expect((error as Error).message).toMatch(/check that it runs/);
  });
});

describe("RedisPacingStore without a server", () => {
  it("refuses a Redis older than 6.2, naming the version and what to do", async () => {
    const fake = {
      defineCommand() {},
      info: async () => "# Server\r\nredis_version:6.0.16\r\n",
    };
    const store = new RedisPacingStore({ redis: fake as never, botId: 1 });
    const error = await store.acquire(request).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: "ERR_REDIS_VERSION" });
    expect((error as Error).message).toMatch(/Redis 6\.0\.16 is too old.*6\.2\.0.*upgrade/);
  });

  it("checks its options whole", () => {
    const make = (options: unknown) => () => new RedisPacingStore(options as never);
    expect(make(undefined)).toThrow(TypeError);
    expect(make({ redis: "redis://x", botId: 1, prefx: "a" })).toThrow(
      "Unknown option `prefx` in `options` (did you mean `prefix`?)",
    );
    expect(make({ redis: "http://user:pw@x", botId: 1 })).toThrow(
      "Expected `redis` to be a redis:// or rediss:// URL or an ioredis client, got a string that is not such a URL",
    );
    expect(make({ redis: "redis://x", botId: "123:abc" })).toThrow(/botId/);
    expect(make({ redis: "redis://x", botId: 1, prefix: "a{b" })).toThrow(/prefix/);
    expect(make({ redis: "redis://x", botId: 1, time: "local" })).toThrow(/time/);
    expect(make({ redis: "redis://x", botId: 1, reserveAheadMs: -1 })).toThrow(
      /Expected `reserveAheadMs` to be/,
    );
    expect(() => botIdOf("nope")).toThrow("Expected a bot token of the form `<bot id>:<secret>`");
  });

  it("rejects every call after close() with ERR_REDIS_CLOSED", async () => {
    const store = new RedisPacingStore({ redis: "redis://127.0.0.1:1", botId: 1 });
    await store.close();
    await expect(store.acquire(request)).rejects.toMatchObject({ code: "ERR_REDIS_CLOSED" });
  });
});
