import { describe, expect, it } from "vitest";
import { Priority } from "../src/index.js";
import { setup } from "./support/setup.js";

describe("per-chat pacing under a global budget", () => {
  it("one chat's pacing never delays another chat", async () => {
    const { clock, outbox, rec } = setup({
      privateChatRps: 1,
      groupChatRps: 20 / 60,
      groupBurst: 1,
    });
    for (const n of [1, 2])
      outbox.enqueue({ chatId: -7, execute: rec.scripted(`group${n}`, undefined, -7) });
    for (const n of [1, 2, 3])
      outbox.enqueue({ chatId: 8, execute: rec.scripted(`private${n}`, undefined, 8) });
    await clock.advance(3_000);
    const starts = (chat: number) =>
      rec.calls.filter((c) => c.chat === chat).map((c) => c.startedAt);
    expect(starts(-7)).toEqual([0, 3_000]);
    expect(starts(8)).toEqual([0, 1_000, 2_000]);
  });

  it("the global budget caps requests across chats at globalRps in any one-second window", async () => {
    const { clock, outbox, rec } = setup({ privateChatRps: 1, globalRps: 5 });
    for (let chat = 1; chat <= 12; chat++)
      outbox.enqueue({ chatId: chat, execute: rec.scripted(`c${chat}`) });
    await clock.advance(999);
    expect(rec.calls).toHaveLength(5);
    await clock.advance(1);
    expect(rec.calls).toHaveLength(10);
    await clock.advance(1_000);
    expect(rec.calls.map((c) => c.startedAt)).toEqual([
      0, 0, 0, 0, 0, 1_000, 1_000, 1_000, 1_000, 1_000, 2_000, 2_000,
    ]);
  });

  it("when the global budget binds, the best (priority, queued_at) op across chats goes first", async () => {
    const { clock, outbox, rec } = setup({ globalRps: 1 });
    outbox.enqueue({ chatId: 1, execute: rec.scripted("first") });
    await clock.flush();
    outbox.enqueue({
      chatId: 2,
      key: "e",
      priority: Priority.edit,
      execute: rec.scripted("edit-chat2"),
    });
    outbox.enqueue({
      chatId: 3,
      key: "d",
      priority: Priority.delete,
      execute: rec.scripted("delete-chat3"),
    });
    outbox.enqueue({ chatId: 4, priority: Priority.send, execute: rec.scripted("send-chat4") });
    await clock.advance(3_000);
    expect(rec.labels).toEqual(["first", "send-chat4", "delete-chat3", "edit-chat2"]);
  });

  it("different chats are in flight together, bounded by maxInFlight; one chat never has two", async () => {
    const { clock, outbox, rec } = setup({ maxInFlight: 2 });
    outbox.enqueue({ chatId: 1, execute: rec.manual("1a") });
    outbox.enqueue({ chatId: 1, execute: rec.manual("1b") });
    outbox.enqueue({ chatId: 2, execute: rec.manual("2a") });
    outbox.enqueue({ chatId: 3, execute: rec.manual("3a") });
    await clock.flush();
    expect(rec.labels).toEqual(["1a", "2a"]);
    expect(outbox.snapshot()).toMatchObject({ inFlight: 2, pending: 2 });
    rec.last("1a").done.resolve(1);
    await clock.flush();
    // 1b was enqueued before 3a, so it takes the free slot first.
    expect(rec.labels).toEqual(["1a", "2a", "1b"]);
    rec.last("2a").done.resolve(1);
    await clock.flush();
    expect(rec.labels).toEqual(["1a", "2a", "1b", "3a"]);
  });

  it("ops without a chat are not paced per chat but share the global budget", async () => {
    const { clock, outbox, rec } = setup({ privateChatRps: 1, globalRps: 3 });
    for (const n of [1, 2, 3, 4])
      outbox.enqueue({ key: `cb${n}`, execute: rec.scripted(`cb${n}`) });
    await clock.flush();
    expect(rec.calls.map((c) => c.startedAt)).toEqual([0, 0, 0]);
    await clock.advance(1_000);
    expect(rec.calls).toHaveLength(4);
  });

  it("an unpaced op (chat action) keeps the chat's order but takes no pacing slot", async () => {
    const { clock, outbox, rec } = setup({ privateChatRps: 1 });
    outbox.enqueue({ chatId: 1, paced: false, key: "action", execute: rec.scripted("typing") });
    await clock.flush();
    outbox.enqueue({ chatId: 1, execute: rec.scripted("message") });
    await clock.flush();
    outbox.enqueue({ chatId: 1, paced: false, key: "action", execute: rec.scripted("typing2") });
    outbox.enqueue({ chatId: 1, execute: rec.scripted("message2") });
    await clock.flush();
    // Neither action waited for a slot, and the second message still waits its second.
    expect(rec.labels).toEqual(["typing", "message", "typing2"]);
    expect(rec.calls.map((c) => c.startedAt)).toEqual([0, 0, 0]);
    await clock.advance(1_000);
    expect(rec.last("message2").startedAt).toBe(1_000);
  });

  it("chat ids given as numbers and numeric strings share one lane", async () => {
    const { clock, outbox, rec } = setup({ privateChatRps: 1 });
    outbox.enqueue({ chatId: 42, execute: rec.scripted("number") });
    outbox.enqueue({ chatId: "42", execute: rec.scripted("string") });
    await clock.advance(1_000);
    expect(rec.calls.map((c) => c.startedAt)).toEqual([0, 1_000]);
  });

  it("@usernames are paced as groups", async () => {
    const { clock, outbox, rec } = setup({
      groupChatRps: 20 / 60,
      groupBurst: 1,
      privateChatRps: 1,
    });
    outbox.enqueue({ chatId: "@channel", execute: rec.scripted("a") });
    outbox.enqueue({ chatId: "@channel", execute: rec.scripted("b") });
    await clock.advance(3_000);
    expect(rec.calls.map((c) => c.startedAt)).toEqual([0, 3_000]);
  });

  it("arms a single clock timer however many chats wait", async () => {
    const { clock, outbox, rec } = setup({ privateChatRps: 1 });
    for (let chat = 1; chat <= 50; chat++) {
      outbox.enqueue({ chatId: chat, execute: rec.scripted(`a${chat}`) });
      outbox.enqueue({ chatId: chat, execute: rec.scripted(`b${chat}`) });
    }
    await clock.flush();
    expect(rec.calls).toHaveLength(50);
    expect(clock.pendingTimers).toBe(1);
    expect(clock.nextTimerAt()).toBe(1_000);
    await clock.advance(1_000);
    expect(rec.calls).toHaveLength(100);
    expect(clock.pendingTimers).toBe(0);
  });
});
