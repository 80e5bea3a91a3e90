// Closing the transformer's outbox and its bounds, through grammY: close drains what is pending,
// later writes reject with ERR_OUTBOX_CLOSED (reads still pass), a full chat rejects at once.

import { OutboxError } from "@telepace/outbox";
import { afterEach, describe, expect, it } from "vitest";
import { type Fixture, fixture } from "./support.js";

let f: Fixture | undefined;
afterEach(async () => {
  await f?.close();
  f = undefined;
});

describe("close", () => {
  it("drains pending writes, then rejects writes and still passes reads", async () => {
    f = await fixture();
    const chat = f.sim.chats.createPrivate(f.sim.users.create());
    const sends = ["a", "b", "c"].map((text) => f?.bot.api.sendMessage(chat.id, text));
    await f.pace.close();
    expect((await Promise.all(sends)).map((message) => message?.text)).toEqual(["a", "b", "c"]);
    const late = await f.bot.api.sendMessage(chat.id, "late").catch((error: unknown) => error);
    expect(late).toBeInstanceOf(OutboxError);
    expect(late).toMatchObject({ code: "ERR_OUTBOX_CLOSED" });
    expect((await f.bot.api.getMe()).id).toBe(f.sim.bot.id);
  });

  it("without drain, settles what is pending as closed", async () => {
    f = await fixture();
    const chat = f.sim.chats.createPrivate(f.sim.users.create());
    const first = f.bot.api.sendMessage(chat.id, "first");
    const second = f.bot.api.sendMessage(chat.id, "second").catch((error: unknown) => error);
    await new Promise((resolve) => setTimeout(resolve, 0));
    await f.pace.close({ drain: false });
    expect((await first).text).toBe("first");
    expect(await second).toMatchObject({ code: "ERR_OUTBOX_CLOSED" });
  });
});

describe("bounds", () => {
  it("rejects a write at maxPendingPerChat with ERR_OUTBOX_FULL, and coalesces a pending key", async () => {
    f = await fixture({ maxPendingPerChat: 1 });
    const chat = f.sim.chats.createPrivate(f.sim.users.create());
    const sent = await f.bot.api.sendMessage(chat.id, "x");
    const results = await Promise.allSettled(
      ["a", "b", "c", "d"].map((text) => f?.bot.api.sendMessage(chat.id, text)),
    );
    const rejected = results.filter((result) => result.status === "rejected");
    expect(rejected.length).toBeGreaterThan(0);
    expect(rejected.length).toBeLessThan(4);
    for (const result of rejected) {
      expect((result as PromiseRejectedResult).reason).toMatchObject({ code: "ERR_OUTBOX_FULL" });
    }
    // A newer edit of a pending key replaces it even at the bound.
    const first = f.bot.api.editMessageText(chat.id, sent.message_id, "y");
    const second = f.bot.api.editMessageText(chat.id, sent.message_id, "z");
    expect(await first).toBe(true);
    expect(await second).toMatchObject({ text: "z" });
  });
});
