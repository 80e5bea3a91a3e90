import { describe, expect, it } from "vitest";
import {
  MemoryPacingStore,
  outboxDefaults,
  Priority,
  planWrite,
  RetryAfterError,
  TelegramOutbox,
  writeOperation,
} from "../src/index.js";
import { fail } from "./support/ops.js";
import { request } from "./support/pacing-store-contract.js";
import { setup } from "./support/setup.js";

describe("the paid-broadcast budget", () => {
  it("paces paid broadcasts at paidBroadcastRps, apart from the global budget", async () => {
    const { clock, outbox, rec } = setup({ globalRps: 5, paidBroadcastRps: 20, maxInFlight: 64 });
    for (let chat = 1; chat <= 50; chat++) {
      outbox.enqueue({ chatId: chat, paidBroadcast: true, execute: rec.scripted(`paid${chat}`) });
    }
    for (let chat = 101; chat <= 110; chat++) {
      outbox.enqueue({ chatId: chat, execute: rec.scripted(`free${chat}`) });
    }
    await clock.advance(999);
    const started = (prefix: string) => rec.labels.filter((l) => l.startsWith(prefix)).length;
    expect([started("paid"), started("free")]).toEqual([20, 5]);
    await clock.advance(1);
    expect([started("paid"), started("free")]).toEqual([40, 10]);
    await clock.advance(1_000);
    expect([started("paid"), started("free")]).toEqual([50, 10]);
  });

  it("a reply waits for no paid broadcast, and a full global budget holds no paid send", async () => {
    const { clock, outbox, rec } = setup({ globalRps: 2, paidBroadcastRps: 100, maxInFlight: 64 });
    // The global budget is spent: two sends now, the third waits a second.
    for (const chat of [201, 202, 203]) {
      outbox.enqueue({ chatId: chat, execute: rec.scripted(`free${chat}`) });
    }
    await clock.flush();
    for (let chat = 1; chat <= 30; chat++) {
      outbox.enqueue({
        chatId: chat,
        priority: Priority.edit + 1,
        paidBroadcast: true,
        execute: rec.scripted(`paid${chat}`),
      });
    }
    await clock.flush();
    expect(rec.labels.filter((l) => l.startsWith("paid"))).toHaveLength(30);
    expect(rec.labels).not.toContain("free203");
    await clock.advance(1_000);
    expect(rec.last("free203").startedAt).toBe(1_000);
  });

  it("keeps each chat's pacing and order for paid sends", async () => {
    const { clock, outbox, rec } = setup({ privateChatRps: 1, paidBroadcastRps: 1000 });
    outbox.enqueue({ chatId: 7, paidBroadcast: true, execute: rec.scripted("paid1", ["a"], 7) });
    outbox.enqueue({ chatId: 7, execute: rec.scripted("reply", ["b"], 7) });
    outbox.enqueue({ chatId: 7, paidBroadcast: true, execute: rec.scripted("paid2", ["c"], 7) });
    await clock.advance(2_000);
    expect(rec.calls.map((c) => [c.label, c.startedAt])).toEqual([
      ["paid1", 0],
      ["reply", 1_000],
      ["paid2", 2_000],
    ]);
  });

  it("a 429 without a chat freezes paid sends too", async () => {
    const { clock, outbox, rec } = setup({ paidBroadcastRps: 10 });
    const frozen = outbox.enqueue({
      execute: rec.scripted("chatless", [fail(new RetryAfterError(2_000)), "ok"]),
    });
    await clock.flush();
    outbox.enqueue({ chatId: 5, paidBroadcast: true, execute: rec.scripted("paid") });
    await clock.advance(1_999);
    expect(rec.labels).toEqual(["chatless"]);
    await clock.advance(1);
    expect(rec.labels).toContain("paid");
    expect((await frozen).status).toBe("delivered");
  });

  it("defaults to Telegram's 1000/s and checks the option and the op's field", () => {
    expect(outboxDefaults.paidBroadcastRps).toBe(1000);
    expect(() => new TelegramOutbox({ paidBroadcastRps: -1 })).toThrow(
      new RangeError("Expected `paidBroadcastRps` to be an integer >= 0, got -1"),
    );
    expect(() => new TelegramOutbox({ paidBroadcastRpS: 5 } as never)).toThrow(
      /Unknown option `paidBroadcastRpS` in `options` \(did you mean `paidBroadcastRps`\?\)/,
    );
    const outbox = new TelegramOutbox();
    expect(() => outbox.enqueue({ paidBroadcast: "yes" as never, execute: async () => 1 })).toThrow(
      new TypeError("Expected `paidBroadcast` to be a boolean, got string"),
    );
  });

  it("planWrite puts a send with allow_paid_broadcast on the paid budget, nothing else", () => {
    const paid = planWrite("sendMessage", { chat_id: 1, text: "hi", allow_paid_broadcast: true });
    expect(paid.paidBroadcast).toBe(true);
    expect(writeOperation(paid, async () => 1).paidBroadcast).toBe(true);
    expect(planWrite("copyMessage", { chat_id: 1, allow_paid_broadcast: true }).paidBroadcast).toBe(
      true,
    );
    expect(planWrite("sendMessage", { chat_id: 1, text: "hi" }).paidBroadcast).toBeUndefined();
    expect(
      planWrite("sendMessage", { chat_id: 1, allow_paid_broadcast: "true" }).paidBroadcast,
    ).toBeUndefined();
    expect(
      planWrite("editMessageText", { chat_id: 1, message_id: 2, allow_paid_broadcast: true })
        .paidBroadcast,
    ).toBeUndefined();
    expect(
      "paidBroadcast" in writeOperation(planWrite("sendMessage", { chat_id: 1 }), async () => 1),
    ).toBe(false);
  });

  it("MemoryPacingStore checks the request's paidBroadcast field", () => {
    const store = new MemoryPacingStore();
    expect(() => store.acquire(request({ paidBroadcast: 1 as never }))).toThrow(
      new TypeError("Expected `paidBroadcast` to be a boolean or undefined, got 1"),
    );
  });
});
