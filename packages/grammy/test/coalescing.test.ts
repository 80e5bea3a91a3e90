// Coalescing through the transformer, against the sim: superseded edits resolve, a delete drops
// its message's pending edits, replace-progress deletes only after the final arrived, and one
// chat's calls keep their order.

import { ManualClock } from "@telepace/core";
import { eventually } from "@telepace/testing";
import { Api } from "grammy";
import { afterEach, describe, expect, it } from "vitest";
import { replaceProgress, replacing } from "../src/index.js";
import { type Fixture, fixture } from "./support.js";

let f: Fixture | undefined;
afterEach(async () => {
  await f?.close();
  f = undefined;
});

function events(fx: Fixture, chatId: number) {
  return fx.sim.transcript(chatId).events.filter((event) => event.actor === "bot");
}

describe("coalesced edits", () => {
  it("a newer edit replaces a pending one, and the replaced one resolves true", async () => {
    f = await fixture();
    const chat = f.sim.chats.createPrivate(f.sim.users.create());
    const sent = await f.bot.api.sendMessage(chat.id, "0%");
    const edits = Array.from({ length: 10 }, (_, i) =>
      f?.bot.api.editMessageText(chat.id, sent.message_id, `${(i + 1) * 10}%`),
    );
    const results = await Promise.all(edits);
    expect(results.slice(0, -1).every((result) => result === true)).toBe(true);
    expect(results.at(-1)).toMatchObject({ text: "100%" });
    expect(f.sim.counters().calls.editMessageText).toBe(1);
    expect(f.pace.snapshot().counters.coalesced).toBe(9);
  });

  it("a delete drops the message's pending edits: no stale edit reaches Telegram", async () => {
    f = await fixture();
    const chat = f.sim.chats.createPrivate(f.sim.users.create());
    const sent = await f.bot.api.sendMessage(chat.id, "progress");
    const text = f.bot.api.editMessageText(chat.id, sent.message_id, "progress 2");
    const markup = f.bot.api.editMessageReplyMarkup(chat.id, sent.message_id, {
      reply_markup: { inline_keyboard: [[{ text: "x", callback_data: "x" }]] },
    });
    const removed = f.bot.api.deleteMessage(chat.id, sent.message_id);
    expect(await Promise.all([text, markup, removed])).toEqual([true, true, true]);
    expect(events(f, chat.id).map((event) => event.kind)).toEqual(["send", "delete"]);
    expect(f.sim.counters().calls.editMessageText).toBeUndefined();
  });
});

describe("one key for a message's edits, whoever made them", () => {
  it("a delete through grammY drops a stream's pending edit of its progress message", async () => {
    // The outbox runs on a manual clock: the group's next slot comes only when the test says.
    const clock = new ManualClock();
    f = await fixture({ clock, groupBurst: 1 });
    const { sim, bot, pace } = f;
    const group = sim.chats.createSupergroup({ members: [sim.users.create()] });
    await bot.api.getMe(); // streams go through the API the transformer has seen
    // No spacing of the stream's own: its edit is queued at once and waits in the outbox.
    const stream = pace.streams.open(group.id, { editIntervalMs: 0 });
    stream.append("first part");
    await eventually("the progress message is sent", () =>
      expect(events(f as Fixture, group.id).map((event) => event.text)).toEqual(["first part"]),
    );
    const progress = events(f, group.id)[0]?.messageId as number;
    stream.append(" and more");
    await eventually("the stream's edit waits for the group's next slot", () =>
      expect(pace.snapshot().pending).toBe(1),
    );
    const removed = bot.api.deleteMessage(group.id, progress).catch((error: unknown) => error);
    await eventually("the delete is queued", () =>
      expect(pace.snapshot().counters.enqueued).toBe(3),
    );
    expect(pace.snapshot()).toMatchObject({ pending: 1, counters: { superseded: 1 } });
    await clock.advance(60_000);
    expect(await removed).toBe(true);
    await clock.advance(60_000);
    expect(sim.counters().calls.editMessageText).toBeUndefined();
    expect(events(f, group.id).map((event) => event.kind)).toEqual(["send", "delete"]);
  });

  it("a delete through grammY drops the edit a stream holds back, and the final is sent", async () => {
    // The stream spaces its own edits (3.6 s in a group, on the manual clock): its next edit is
    // held by the stream, not queued in the outbox, when the bot deletes the progress message.
    const clock = new ManualClock();
    f = await fixture({ clock });
    const { sim, bot, pace } = f;
    const group = sim.chats.createSupergroup({ members: [sim.users.create()] });
    await bot.api.getMe(); // streams go through the API the transformer has seen
    const stream = pace.streams.open(group.id);
    stream.append("first part");
    await eventually("the progress message is sent", () =>
      expect(events(f as Fixture, group.id).map((event) => event.text)).toEqual(["first part"]),
    );
    const progress = events(f, group.id)[0]?.messageId as number;
    stream.append(" and more");
    await clock.advance(100);
    expect(pace.snapshot().pending).toBe(0); // held by the stream, not queued
    const removed = bot.api.deleteMessage(group.id, progress);
    await clock.advance(60_000); // past the group's next slot and the stream's next edit
    expect(await removed).toBe(true);
    stream.append(" and the end");
    // The group's slot is free by now and a final never waits for the stream's spacing.
    expect(await stream.end()).toMatchObject({ status: "delivered", edits: 0 });
    expect(sim.counters().calls.editMessageText).toBeUndefined();
    expect(events(f, group.id).map((event) => [event.kind, event.text ?? ""])).toEqual([
      ["send", "first part"],
      ["delete", ""],
      ["send", "first part and more and the end"],
    ]);
    const fromBot = sim.transcript(group.id).messages.filter((message) => message.from?.is_bot);
    expect(fromBot.map((message) => message.text)).toEqual(["first part and more and the end"]);
  });
});

describe("replace-progress", () => {
  it("sends the final, drops the pending edit, then deletes the progress message", async () => {
    f = await fixture();
    const chat = f.sim.chats.createPrivate(f.sim.users.create());
    const progress = await f.bot.api.sendMessage(chat.id, "Working… 0%");
    const edit = f.bot.api.editMessageText(chat.id, progress.message_id, "Working… 50%");
    const final = await replaceProgress(f.bot.api, chat.id, progress.message_id, "Done.");
    expect(final.text).toBe("Done.");
    expect(await edit).toBe(true);
    await eventually("the progress message is deleted", () =>
      expect(events(f as Fixture, chat.id).map((event) => event.kind)).toEqual([
        "send",
        "send",
        "delete",
      ]),
    );
    expect(f.sim.transcript(chat.id).messages.map((m) => m.message_id)).toEqual([final.message_id]);
  });

  it("keeps the progress message when the final fails, and works as an `other` spread", async () => {
    f = await fixture();
    const chat = f.sim.chats.createPrivate(f.sim.users.create());
    const progress = await f.bot.api.sendMessage(chat.id, "Working…");
    f.sim.faults.failNext("sendMessage", 1, { code: 400, description: "Bad Request: nope" });
    await expect(
      f.bot.api.sendMessage(chat.id, "Done.", { ...replacing(progress.message_id) }),
    ).rejects.toMatchObject({ error_code: 400 });
    const done = await f.bot.api.sendMessage(chat.id, "<b>Done.</b>", {
      ...replacing(progress.message_id),
      parse_mode: "HTML",
    });
    expect(done.text).toBe("Done.");
    await eventually("deleted", () => expect(f?.sim.counters().calls.deleteMessage).toBe(1));
  });

  it("refuses an Api without the transformer, and a marker on a method that is no send", async () => {
    f = await fixture();
    const bare = new Api(f.sim.token, { apiRoot: f.sim.apiRoot });
    await expect(replaceProgress(bare, 1, 1, "x")).rejects.toThrow(TypeError);
    const chat = f.sim.chats.createPrivate(f.sim.users.create());
    const sent = await f.bot.api.sendMessage(chat.id, "x");
    await expect(
      // A type error too: edits have no `disable_notification`.
      f.bot.api.editMessageText(chat.id, sent.message_id, "y", replacing(sent.message_id) as never),
    ).rejects.toThrow(/marks a send/);
  });
});

describe("order", () => {
  it("keeps per-chat order of sends, and runs chats side by side", async () => {
    f = await fixture();
    const a = f.sim.chats.createPrivate(f.sim.users.create());
    const b = f.sim.chats.createPrivate(f.sim.users.create());
    const group = f.sim.chats.createGroup({ members: [f.sim.users.create()] });
    const calls = [];
    for (let i = 0; i < 6; i++) {
      for (const chat of [a, b, group]) calls.push(f.bot.api.sendMessage(chat.id, `#${i}`));
    }
    await Promise.all(calls);
    for (const chat of [a, b, group]) {
      const sent = events(f, chat.id).filter((event) => event.kind === "send");
      expect(sent.map((event) => event.text)).toEqual(["#0", "#1", "#2", "#3", "#4", "#5"]);
    }
    expect(f.sim.counters().tooManyRequests).toBe(0);
  });

  it("an aborted call is removed before it is sent, and rejects with the reason", async () => {
    f = await fixture();
    const chat = f.sim.chats.createPrivate(f.sim.users.create());
    const first = f.bot.api.sendMessage(chat.id, "first");
    const controller = new AbortController();
    const second = f.bot.api.sendMessage(
      chat.id,
      "second",
      undefined,
      controller.signal as unknown as Parameters<Api["sendMessage"]>[3],
    );
    const outcome = second.catch((error: unknown) => error);
    controller.abort(new Error("changed my mind"));
    await first;
    expect(await outcome).toMatchObject({ message: "changed my mind" });
    expect(f.sim.counters().calls.sendMessage).toBe(1);
  });
});
