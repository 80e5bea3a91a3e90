// The chat page's event stream: what it sends for each change, its bound on open streams, a
// client that stops reading cut at its buffer bound (and counted) while the others go on, and a
// prompt end when the simulator closes.

import { once } from "node:events";
import { connect } from "node:net";
import { request } from "undici";
import { afterEach, describe, expect, it } from "vitest";
import { type BotApiSim, start } from "../src/index.js";
import { MAX_EVENT_STREAMS } from "../src/ui/event-stream.js";
import { agent, call } from "./helpers.js";

let sim: BotApiSim;

afterEach(() => sim?.close());

interface StreamEvent {
  readonly name: string;
  // biome-ignore lint/suspicious/noExplicitAny: event payloads are checked field by field
  readonly data: any;
}

/** Opens the stream and collects its events as they arrive. */
async function openStream(target: BotApiSim) {
  const response = await request(`${target.apiRoot}/_sim/events`, { dispatcher: agent });
  const events: StreamEvent[] = [];
  let buffer = "";
  response.body.on("data", (chunk: Buffer) => {
    buffer += chunk.toString();
    let end = buffer.indexOf("\n\n");
    while (end >= 0) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      const name = /^event: (.+)$/m.exec(block)?.[1];
      const data = /^data: (.+)$/m.exec(block)?.[1];
      if (name !== undefined && data !== undefined) events.push({ name, data: JSON.parse(data) });
      end = buffer.indexOf("\n\n");
    }
  });
  const next = async (name: string): Promise<StreamEvent> => {
    for (;;) {
      const found = events.findIndex((event) => event.name === name);
      if (found >= 0) return events.splice(found, 1)[0] as StreamEvent;
      await once(response.body, "data");
    }
  };
  return { response, events, next };
}

describe("the event stream", () => {
  it("greets, then tells of new users and chats, messages, answers, 429s and faults", async () => {
    sim = await start();
    const stream = await openStream(sim);
    expect(stream.response.headers["content-type"]).toBe("text/event-stream; charset=utf-8");
    expect((await stream.next("hello")).data).toEqual({ nowMs: expect.any(Number) });
    const user = sim.users.create({ firstName: "Uma" });
    expect((await stream.next("user")).data.user).toEqual(user);
    const chat = sim.chats.createPrivate(user);
    const created = (await stream.next("chat")).data.chat;
    expect(created).toMatchObject({
      key: `p:${sim.bot.id}:${user.id}`,
      chat: { id: chat.id, type: "private", first_name: "Uma" },
      botId: sim.bot.id,
      newest: null,
      activitySeq: 0.5,
      isBlocked: false,
    });
    const hello = sim.sendText(user, chat, "hello");
    const said = (await stream.next("transcript")).data;
    expect(said.event).toMatchObject({ kind: "send", actor: "user", text: "hello" });
    expect(said.chat.newest).toEqual(hello);
    expect(said.chat.activitySeq).toBe(said.event.seq);
    expect(said.draft).toBeNull();
    await call(sim, "sendMessageDraft", {
      chat_id: chat.id,
      draft_id: 5,
      text: "thinking",
      can_stop: true,
    });
    const draft = (await stream.next("transcript")).data;
    expect(draft.event).toMatchObject({ kind: "draft", draftChange: "start" });
    expect(draft.draft).toMatchObject({ draftId: 5, text: "thinking", hasStopButton: true });
    expect(draft.nowMs).toEqual(expect.any(Number));
    const sent = await call(sim, "sendMessage", {
      chat_id: chat.id,
      text: "done",
      reply_markup: { inline_keyboard: [[{ text: "Go", callback_data: "go" }]] },
    });
    // The send removed the draft, and the event says so.
    expect((await stream.next("transcript")).data).toMatchObject({
      event: { kind: "send", actor: "bot", text: "done" },
      draft: null,
    });
    const query = sim.pressButton(user, chat, sent.body.result.message_id, "go");
    await call(sim, "answerCallbackQuery", { callback_query_id: query.id, text: "Gone!" });
    expect((await stream.next("callback_answer")).data).toMatchObject({
      chatKey: created.key,
      callbackQueryId: query.id,
      answer: { text: "Gone!", showAlert: false },
    });
    for (let i = 0; i < 3; i++) await call(sim, "sendMessage", { chat_id: chat.id, text: `${i}` });
    expect((await stream.next("rate_limited")).data).toEqual({
      chatKey: created.key,
      botId: sim.bot.id,
      method: "sendMessage",
      retryAfter: 1,
      scope: "chat",
    });
    sim.faults.failNext("getMe", 1, { code: 502 });
    await call(sim, "getMe");
    expect((await stream.next("fault")).data).toEqual({ method: "getMe", fault: "fail" });
    stream.response.body.destroy();
  });

  it(`holds at most ${MAX_EVENT_STREAMS} streams; another is answered 503 until one closes`, async () => {
    sim = await start();
    const streams = [];
    for (let i = 0; i < MAX_EVENT_STREAMS; i++) streams.push(await openStream(sim));
    const refused = await request(`${sim.apiRoot}/_sim/events`, { dispatcher: agent });
    expect(refused.statusCode).toBe(503);
    expect(((await refused.body.json()) as { description: string }).description).toBe(
      `Service Unavailable: ${MAX_EVENT_STREAMS} event streams are open already`,
    );
    const first = streams[0];
    first?.response.body.destroy();
    let again = await request(`${sim.apiRoot}/_sim/events`, { dispatcher: agent });
    // The server learns of the closed stream a moment later.
    while (again.statusCode === 503) {
      await again.body.dump();
      await new Promise((resolve) => setTimeout(resolve, 10));
      again = await request(`${sim.apiRoot}/_sim/events`, { dispatcher: agent });
    }
    expect(again.statusCode).toBe(200);
    again.body.destroy();
    for (const stream of streams) stream.response.body.destroy();
  });

  it("cuts a client that stops reading once 1 MiB waits for it, and counts it; others go on", async () => {
    sim = await start();
    const stalled = connect(sim.port, "127.0.0.1");
    await once(stalled, "connect");
    stalled.write(`GET /_sim/events HTTP/1.1\r\nHost: 127.0.0.1:${sim.port}\r\n\r\n`);
    await once(stalled, "data");
    stalled.pause();
    const reader = await openStream(sim);
    await reader.next("hello");
    const user = sim.users.create();
    const chat = sim.chats.createPrivate(user);
    const text = "x".repeat(4000);
    const closed = once(stalled, "close");
    let sent = 0;
    while (sim.counters().eventStreamsCut === 0 && sent < 5000) {
      sim.sendText(user, chat, text);
      sent++;
      // Let the sockets drain what the kernel takes, as a real client's would.
      if (sent % 50 === 0) await new Promise((resolve) => setImmediate(resolve));
    }
    expect(sim.counters().eventStreamsCut).toBe(1);
    stalled.resume();
    await closed;
    sim.sendText(user, chat, "still here");
    for (;;) {
      const { data } = await reader.next("transcript");
      if (data.event.text === "still here") break;
    }
    reader.response.body.destroy();
  });

  it("ends every stream at close, so close() does not wait for them", async () => {
    sim = await start();
    const stream = await openStream(sim);
    await stream.next("hello");
    const ended = once(stream.response.body, "end");
    const started = performance.now();
    await sim.close();
    await ended;
    expect(performance.now() - started).toBeLessThan(2000);
    const refused = await request(`${sim.apiRoot}/_sim/events`, { dispatcher: agent }).catch(
      (error: Error) => error,
    );
    expect(refused).toBeInstanceOf(Error);
  });
});
