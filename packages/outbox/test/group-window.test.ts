import { ManualClock } from "@telepace/core";
import { describe, expect, it } from "vitest";
import { Priority, TelegramOutbox } from "../src/index.js";
import { setup } from "./support/setup.js";

const GROUP = -100;
const startsOf = (calls: readonly { label: string; startedAt: number }[], prefix: string) =>
  calls.filter((c) => c.label.startsWith(prefix)).map((c) => c.startedAt);
const seconds = (from: number, count: number) =>
  Array.from({ length: count }, (_, i) => (from + i) * 1_000);

describe("groups: a sliding window with a send reserve", () => {
  it("a group takes groupBurst requests a second apart, then waits for the window", async () => {
    const { clock, outbox, rec } = setup({ privateChatRps: 1, groupChatRps: 20 / 60 });
    for (let n = 0; n < 22; n++) outbox.enqueue({ chatId: GROUP, execute: rec.scripted(`m${n}`) });
    await clock.advance(59_999);
    // 20 in the first minute: the burst Telegram allows, at its one message per second.
    expect(rec.calls.map((c) => c.startedAt)).toEqual(seconds(0, 20));
    expect(outbox.snapshot().chats[0]).toMatchObject({ pending: 2, nextSlotInMs: 1 });
    await clock.advance(1_001);
    // The 21st once the first start left the window, the 22nd a second later.
    expect(rec.calls.map((c) => c.startedAt).slice(20)).toEqual([60_000, 61_000]);
  });

  it("pacingMarginMs lengthens the group's window", async () => {
    const { clock, outbox, rec } = setup({
      privateChatRps: 1,
      groupChatRps: 20 / 60,
      pacingMarginMs: 100,
    });
    for (let n = 0; n < 21; n++) outbox.enqueue({ chatId: GROUP, execute: rec.scripted(`m${n}`) });
    await clock.advance(60_099);
    expect(rec.calls).toHaveLength(20);
    await clock.advance(1);
    expect(rec.last("m20").startedAt).toBe(60_100);
  });

  it("edits use the window only up to groupBurst - sendReserve; sends keep the rest", async () => {
    const { clock, outbox, rec } = setup({ privateChatRps: 1, groupChatRps: 20 / 60 });
    for (let n = 0; n < 20; n++) {
      outbox.enqueue({
        chatId: GROUP,
        key: `edit:${n}`,
        priority: Priority.edit,
        execute: rec.scripted(`edit${n}`),
      });
    }
    await clock.advance(30_000);
    expect(startsOf(rec.calls, "edit")).toEqual(seconds(0, 17));
    // The reserve: three sends go at once (at the per-chat spacing), though edits wait.
    for (const n of [1, 2, 3]) outbox.enqueue({ chatId: GROUP, execute: rec.scripted(`send${n}`) });
    await clock.advance(2_500);
    expect(startsOf(rec.calls, "send")).toEqual([30_000, 31_000, 32_000]);
    // The window is full now: a fourth send waits for its oldest start to leave.
    outbox.enqueue({ chatId: GROUP, execute: rec.scripted("send4") });
    await clock.advance(27_499);
    expect(rec.calls).toHaveLength(20);
    await clock.advance(1);
    expect(rec.last("send4").startedAt).toBe(60_000);
    // Edits go on once fewer than 17 starts (sends included) are in the window.
    await clock.advance(10_000);
    expect(startsOf(rec.calls, "edit").slice(17)).toEqual([64_000, 65_000, 66_000]);
  });

  it("a final send never waits for the budget progress edits used up", async () => {
    const run = async (sendReserve: number) => {
      const { clock, outbox, rec } = setup({
        privateChatRps: 1,
        groupChatRps: 20 / 60,
        sendReserve,
      });
      outbox.enqueue({ chatId: GROUP, execute: rec.scripted("progress") });
      // A job edits its progress message ten times a second for 30 s; the edits coalesce.
      for (let t = 0; t < 300; t++) {
        outbox.enqueue({
          chatId: GROUP,
          key: "edit:1",
          priority: Priority.edit,
          execute: rec.scripted("edit"),
        });
        await clock.advance(100);
      }
      const final = outbox.enqueue({ chatId: GROUP, execute: rec.scripted("final") });
      await clock.advance(60_000);
      expect((await final).status).toBe("delivered");
      return { edits: startsOf(rec.calls, "edit").length, final: rec.last("final").startedAt };
    };
    // With the reserve, the final goes the moment it is issued (the progress send took 1 of 17).
    expect(await run(3)).toEqual({ edits: 16 + 1, final: 30_000 });
    // Without it, the edits spend the window and the final waits half a minute for it.
    expect(await run(0)).toEqual({ edits: 19 + 1, final: 60_000 });
  });

  it("a send overtakes an edit that waits for the reserve", async () => {
    const { clock, outbox, rec } = setup({
      privateChatRps: 1,
      groupChatRps: 20 / 60,
      groupBurst: 3,
      sendReserve: 2,
    });
    // Window: 3 per 9 s; edits may use 1 of them.
    outbox.enqueue({
      chatId: GROUP,
      key: "e1",
      priority: Priority.edit,
      execute: rec.scripted("e1"),
    });
    outbox.enqueue({
      chatId: GROUP,
      key: "e2",
      priority: Priority.edit,
      execute: rec.scripted("e2"),
    });
    await clock.advance(1_500);
    expect(rec.labels).toEqual(["e1"]);
    outbox.enqueue({ chatId: GROUP, execute: rec.scripted("send") });
    await clock.flush();
    expect(rec.last("send").startedAt).toBe(1_500);
    await clock.advance(20_000);
    // e2 waits until both earlier starts left the window (1.5 s + 9 s).
    expect(rec.last("e2").startedAt).toBe(10_500);
  });

  it("with every default, one private chat is paced exactly as the seed (no margin, no window)", async () => {
    const clock = new ManualClock();
    const outbox = new TelegramOutbox({ clock });
    const starts: number[] = [];
    for (let n = 0; n < 4; n++) {
      outbox.enqueue({
        chatId: 5,
        execute: async () => {
          starts.push(clock.now());
        },
      });
    }
    await clock.advance(5_000);
    expect(starts).toEqual([0, 1_000, 2_000, 3_000]);
  });

  it("groupChatRps 0 turns group pacing off, window and spacing alike", async () => {
    const { clock, outbox, rec } = setup({ privateChatRps: 1, groupChatRps: 0 });
    for (let n = 0; n < 3; n++) outbox.enqueue({ chatId: GROUP, execute: rec.scripted(`m${n}`) });
    await clock.flush();
    expect(rec.calls.map((c) => c.startedAt)).toEqual([0, 0, 0]);
  });
});

describe("the global margin", () => {
  /** Twelve chats, one op each, every request taking `latencyMs`; returns the start times. */
  async function broadcast(pacingMarginMs: number, latencyMs: number): Promise<number[]> {
    const { clock, outbox } = setup({ privateChatRps: 1, globalRps: 5, pacingMarginMs });
    const starts: number[] = [];
    for (let chat = 1; chat <= 12; chat++) {
      outbox.enqueue({
        chatId: chat,
        execute: async () => {
          starts.push(clock.now());
          await clock.sleep(latencyMs);
        },
      });
    }
    await clock.runAll();
    return starts;
  }

  it("answers at once: the global second gets no margin", async () => {
    expect(await broadcast(100, 0)).toEqual([
      0, 0, 0, 0, 0, 1_000, 1_000, 1_000, 1_000, 1_000, 2_000, 2_000,
    ]);
  });

  it("answers taking 40 ms widen the second by 40 ms: a request reaches Telegram before its answer", async () => {
    expect(await broadcast(100, 40)).toEqual([
      0, 0, 0, 0, 0, 1_040, 1_040, 1_040, 1_040, 1_040, 2_080, 2_080,
    ]);
  });

  it("answers slower than pacingMarginMs still hold their place until a second after them", async () => {
    // A request may reach Telegram as late as its answer: however slow, never two in one second.
    expect(await broadcast(100, 300)).toEqual([
      0, 0, 0, 0, 0, 1_300, 1_300, 1_300, 1_300, 1_300, 2_600, 2_600,
    ]);
  });

  it("a request still in flight counts as taking as long as it has so far", async () => {
    // At 1 s the first five are still out (1 s so far): wait to 2 s; at 2 s they are known to
    // have taken 1.5 s: wait to 2.5 s.
    expect(await broadcast(2_000, 1_500)).toEqual([
      0, 0, 0, 0, 0, 2_500, 2_500, 2_500, 2_500, 2_500, 5_000, 5_000,
    ]);
  });

  it("pacingMarginMs 0 widens no store window, but every request still holds its place until a second after its answer", async () => {
    expect(await broadcast(0, 300)).toEqual([
      0, 0, 0, 0, 0, 1_300, 1_300, 1_300, 1_300, 1_300, 2_600, 2_600,
    ]);
  });

  it("a slow request holds one place of the second, not the whole budget", async () => {
    const { clock, outbox } = setup({ privateChatRps: 1, globalRps: 5 });
    const starts: [number, number][] = [];
    for (let chat = 1; chat <= 10; chat++) {
      outbox.enqueue({
        chatId: chat,
        execute: async () => {
          starts.push([chat, clock.now()]);
          await clock.sleep(chat === 1 ? 5_000 : 10 * chat);
        },
      });
    }
    await clock.runAll();
    // Chat 1 is out for 5 s: the next second has four places, each a second after the answer
    // of the request it follows (20, 30, 40, 50 ms), and the fifth waits for chat 1's answer.
    expect(starts).toEqual([
      [1, 0],
      [2, 0],
      [3, 0],
      [4, 0],
      [5, 0],
      [6, 1_020],
      [7, 1_030],
      [8, 1_040],
      [9, 1_050],
      [10, 2_080],
    ]);
  });
});
