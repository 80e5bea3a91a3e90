// Telegram's flood limits: bursts into one private chat, 20/min per group, about 30/s overall,
// 429 with retry_after and Retry-After, time scaling, edits counting, and turning them off —
// over HTTP with a manual clock, plus property tests of the limiter itself.

import { ManualClock } from "@telepace/core";
import fc from "fast-check";
import { afterEach, describe, expect, it } from "vitest";
import { type BotApiSim, defaultRateLimits, start } from "../src/index.js";
import { RateLimiter } from "../src/world/rate-limiter.js";
import { call, expectTooManyRequests } from "./helpers.js";

let sim: BotApiSim;
let clock: ManualClock;

async function setup(options: Parameters<typeof start>[0] = {}) {
  clock = new ManualClock();
  sim = await start({ clock, ...options });
}

afterEach(() => sim?.close());

function privateChat() {
  const user = sim.users.create();
  return sim.chats.createPrivate(user);
}

const send = (chatId: number, text = "x") => call(sim, "sendMessage", { chat_id: chatId, text });

describe("per private chat", () => {
  it("allows a short burst, then answers 429 with retry_after and a Retry-After header", async () => {
    await setup();
    const chat = privateChat();
    for (let i = 0; i < defaultRateLimits.perChatBurst; i++)
      expect((await send(chat.id)).status).toBe(200);
    const limited = await send(chat.id);
    expectTooManyRequests(limited, 1);
    expect(sim.counters().tooManyRequests).toBe(1);
    expect(sim.counters().tooManyRequestsByChat).toEqual({ [String(chat.id)]: 1 });
    expect(sim.transcript(chat).messages).toHaveLength(defaultRateLimits.perChatBurst);
  });

  it("lets a client that waits retry_after through", async () => {
    await setup();
    const chat = privateChat();
    for (let i = 0; i < 3; i++) await send(chat.id);
    const limited = await send(chat.id);
    await clock.advance(limited.body.parameters.retry_after * 1000);
    expect((await send(chat.id)).status).toBe(200);
  });

  it("never limits a sender pacing at 1 message/s", async () => {
    await setup();
    const chat = privateChat();
    for (let i = 0; i < 30; i++) {
      expect((await send(chat.id)).status).toBe(200);
      await clock.advance(1000);
    }
  });

  it("keeps chats independent", async () => {
    await setup();
    const a = privateChat();
    const b = privateChat();
    for (let i = 0; i < 3; i++) await send(a.id);
    expect((await send(a.id)).status).toBe(429);
    expect((await send(b.id)).status).toBe(200);
  });
});

describe("per group", () => {
  it("allows 20 per minute into a group at 1/s and limits the 21st", async () => {
    await setup();
    const user = sim.users.create();
    const group = sim.chats.createGroup({ members: [user] });
    for (let i = 0; i < 20; i++) {
      expect((await send(group.id)).status).toBe(200);
      await clock.advance(1000);
    }
    const limited = await send(group.id);
    expect(limited.status).toBe(429);
    // The first of the 20 leaves the minute window at t = 60 s; it is t = 20 s now.
    expect(limited.body.parameters.retry_after).toBe(40);
    await clock.advance(39_999);
    expect((await send(group.id)).status).toBe(429);
    await clock.advance(1);
    expect((await send(group.id)).status).toBe(200);
  });

  it("never limits a sender pacing at one message per 3 s", async () => {
    await setup();
    const user = sim.users.create();
    const group = sim.chats.createSupergroup({ members: [user] });
    for (let i = 0; i < 45; i++) {
      expect((await send(group.id)).status).toBe(200);
      await clock.advance(3000);
    }
  });
});

describe("global", () => {
  it("allows about 30 messages per second over many chats", async () => {
    await setup();
    const chats = Array.from({ length: 40 }, () => privateChat());
    const statuses: number[] = [];
    for (const chat of chats) statuses.push((await send(chat.id)).status);
    expect(statuses.filter((status) => status === 200)).toHaveLength(30);
    expect(statuses.slice(30).every((status) => status === 429)).toBe(true);
    await clock.advance(1000);
    expect((await send((chats[35] as { id: number }).id)).status).toBe(200);
  });
});

describe("edits", () => {
  it("count against the same limits by default", async () => {
    await setup();
    const chat = privateChat();
    const sent = (await send(chat.id, "v0")).body.result;
    await send(chat.id);
    await send(chat.id);
    const edit = await call(sim, "editMessageText", {
      chat_id: chat.id,
      message_id: sent.message_id,
      text: "v1",
    });
    expect(edit.status).toBe(429);
  });

  it("do not count with countEdits: false", async () => {
    await setup({ rateLimits: { countEdits: false } });
    const chat = privateChat();
    const sent = (await send(chat.id, "v0")).body.result;
    await send(chat.id);
    await send(chat.id);
    for (let i = 1; i <= 5; i++) {
      const edit = await call(sim, "editMessageText", {
        chat_id: chat.id,
        message_id: sent.message_id,
        text: `v${i}`,
      });
      expect(edit.status).toBe(200);
    }
  });

  it("do not count a refused no-op edit", async () => {
    await setup();
    const chat = privateChat();
    const sent = (await send(chat.id, "same")).body.result;
    for (let i = 0; i < 5; i++) {
      const edit = await call(sim, "editMessageText", {
        chat_id: chat.id,
        message_id: sent.message_id,
        text: "same",
      });
      expect(edit.status).toBe(400);
    }
    expect((await send(chat.id)).status).toBe(200);
  });
});

describe("configuration", () => {
  it("scales every limit and retry_after with timeScale", async () => {
    await setup({ timeScale: 20 });
    const chat = privateChat();
    for (let i = 0; i < 3; i++) await send(chat.id);
    const limited = await send(chat.id);
    expect(limited.body.parameters.retry_after).toBe(0.05);
    expect(limited.body.description).toBe("Too Many Requests: retry after 0.05");
    expect(limited.headers["retry-after"]).toBe("1");
    await clock.advance(50);
    expect((await send(chat.id)).status).toBe(200);
    expect(sim.timeScale).toBe(20);
  });

  it("can be turned off at start and changed at runtime", async () => {
    await setup({ rateLimits: false });
    const chat = privateChat();
    for (let i = 0; i < 50; i++) expect((await send(chat.id)).status).toBe(200);
    sim.setRateLimits({ perChatBurst: 1 });
    expect(sim.rateLimits).toMatchObject({ perChatBurst: 1, perChatPerSecond: 1 });
    expect((await send(chat.id)).status).toBe(200);
    expect((await send(chat.id)).status).toBe(429);
  });

  it("does not limit reads or chat actions", async () => {
    await setup();
    const chat = privateChat();
    for (let i = 0; i < 40; i++) {
      expect(
        (await call(sim, "sendChatAction", { chat_id: chat.id, action: "typing" })).status,
      ).toBe(200);
      expect((await call(sim, "getChat", { chat_id: chat.id })).status).toBe(200);
    }
  });
});

describe("RateLimiter properties", () => {
  it("a sender that waits every retry_after is never refused twice in a row", () => {
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: 0, max: 2000 }), { minLength: 1, maxLength: 200 }),
        fc.boolean(),
        fc.constantFrom(1, 20),
        (gaps, isGroup, timeScale) => {
          const limiter = new RateLimiter(defaultRateLimits, timeScale);
          let now = 0;
          for (const gap of gaps) {
            now += gap / timeScale;
            const first = limiter.tryConsume("chat", isGroup, "send", now);
            if (!first.allowed) {
              expect(first.retryAfter).toBeGreaterThan(0);
              now += first.retryAfter * 1000;
              expect(limiter.tryConsume("chat", isGroup, "send", now).allowed).toBe(true);
            }
          }
        },
      ),
      { numRuns: 200 },
    );
  });

  it("never admits more than 20 into a group in any minute", () => {
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: 0, max: 5000 }), { minLength: 1, maxLength: 300 }),
        (gaps) => {
          const limiter = new RateLimiter(
            { ...defaultRateLimits, perChatBurst: 100, perChatPerSecond: 100 },
            1,
          );
          const admitted: number[] = [];
          let now = 0;
          for (const gap of gaps) {
            now += gap;
            if (limiter.tryConsume("group", true, "send", now).allowed) admitted.push(now);
          }
          for (let i = 20; i < admitted.length; i++) {
            expect((admitted[i] as number) - (admitted[i - 20] as number)).toBeGreaterThanOrEqual(
              60_000,
            );
          }
        },
      ),
      { numRuns: 200 },
    );
  });

  it("never admits more than burst + rate × time into one chat", () => {
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: 0, max: 700 }), { minLength: 1, maxLength: 300 }),
        (gaps) => {
          const limiter = new RateLimiter(defaultRateLimits, 1);
          let now = 0;
          let admitted = 0;
          for (const gap of gaps) {
            now += gap;
            if (limiter.tryConsume("chat", false, "send", now).allowed) admitted++;
          }
          expect(admitted).toBeLessThanOrEqual(
            defaultRateLimits.perChatBurst + Math.floor(now / 1000),
          );
        },
      ),
      { numRuns: 200 },
    );
  });

  it("reports whole Telegram seconds divided by the time scale", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 10 }),
        fc.constantFrom(1, 2, 4, 20, 100),
        (burst, timeScale) => {
          const limiter = new RateLimiter({ ...defaultRateLimits, perChatBurst: burst }, timeScale);
          let decision = limiter.tryConsume("c", false, "send", 0);
          while (decision.allowed) decision = limiter.tryConsume("c", false, "send", 0);
          expect(Number.isInteger(decision.retryAfter * timeScale)).toBe(true);
          expect(decision.retryAfter * timeScale).toBeGreaterThanOrEqual(1);
        },
      ),
      { numRuns: 100 },
    );
  });
});
