// A client's own writes reach its streams: a deleteMessage of a stream's progress message drops
// the edit the stream holds back (not yet in the outbox), and the final arrives as a new message.

import { type BotApiSim, start } from "@telepace/bot-api-sim";
import { ManualClock } from "@telepace/core";
import { eventually } from "@telepace/testing";
import { afterEach, describe, expect, it } from "vitest";
import { TelegramClient } from "../src/index.js";

let sim: BotApiSim | undefined;
let client: TelegramClient | undefined;

afterEach(async () => {
  await client?.close({ timeoutMs: 1000 });
  await sim?.close();
  client = undefined;
  sim = undefined;
});

describe("client writes and streams", () => {
  it("deleteMessage of the progress message drops the held edit; the final is a new message", async () => {
    const clock = new ManualClock();
    const world = await start();
    sim = world;
    const api = new TelegramClient({ token: world.token, apiRoot: world.apiRoot, clock });
    client = api;
    const group = world.chats.createSupergroup({ members: [world.users.create()] });
    const bot = () => world.transcript(group.id).events.filter((event) => event.actor === "bot");
    const stream = api.streams.open(group.id);
    stream.append("first part");
    await eventually("the progress message is sent", () =>
      expect(bot().map((event) => event.text)).toEqual(["first part"]),
    );
    const progress = bot()[0]?.messageId as number;
    stream.append(" and more");
    await clock.advance(100);
    expect(api.outbox.snapshot().pending).toBe(0); // the edit is held by the stream
    const removed = api.deleteMessage(group.id, progress);
    // Steps no longer than a request's timeout: the client's requests time out on this clock.
    await clock.advance(3_100); // the group's next slot (20 a minute)
    expect(await removed).toMatchObject({ status: "delivered" });
    await clock.advance(3_100); // past the stream's edit spacing and the group's next slot
    stream.append(" and the end");
    expect(await stream.end()).toMatchObject({ status: "delivered", edits: 0 });
    expect(world.counters().calls.editMessageText).toBeUndefined();
    expect(bot().map((event) => [event.kind, event.text ?? ""])).toEqual([
      ["send", "first part"],
      ["delete", ""],
      ["send", "first part and more and the end"],
    ]);
  });

  it("a message the client sends after the progress message makes the final a new message", async () => {
    const world = await start();
    sim = world;
    const api = new TelegramClient({ token: world.token, apiRoot: world.apiRoot });
    client = api;
    const group = world.chats.createSupergroup({ members: [world.users.create()] });
    const stream = api.streams.open(group.id);
    stream.append("answer so far");
    const texts = () =>
      world.transcript(group.id).messages.flatMap((message) => message.text ?? []);
    await eventually("the progress message is sent", () =>
      expect(texts()).toEqual(["answer so far"]),
    );
    expect(await api.sendMessage(group.id, "meanwhile")).toMatchObject({ status: "delivered" });
    stream.append(", and the rest");
    expect(await stream.end()).toMatchObject({ status: "delivered" });
    // Below "meanwhile" an edited final would sit out of sight: it is sent after it instead.
    await eventually("the replaced progress message is deleted", () =>
      expect(texts()).toEqual(["meanwhile", "answer so far, and the rest"]),
    );
  });
});
