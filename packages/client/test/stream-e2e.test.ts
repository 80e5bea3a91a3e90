// client.streamMessage over real HTTP against the Bot API simulator: draft frames in a private
// chat, a progress message in a group, splits past 4096, the Stop button, finals under faults.

import type { Update } from "@grammyjs/types";
import { type BotApiSim, start } from "@telepace/bot-api-sim";
import { eventually } from "@telepace/testing";
import { afterEach, describe, expect, it } from "vitest";
import { type StreamSource, TelegramClient } from "../src/index.js";

let sim: BotApiSim;
let client: TelegramClient;

afterEach(async () => {
  await client?.close({ timeoutMs: 1000 });
  await sim?.close();
});

async function setup(options: Parameters<typeof start>[0] = {}) {
  sim = await start(options);
  client = new TelegramClient({ token: sim.token, apiRoot: sim.apiRoot });
  const user = sim.users.create({ firstName: "Dana" });
  const dm = sim.chats.createPrivate(user);
  const group = sim.chats.createSupergroup({ members: [user] });
  return { user, dm, group };
}

/** Words at a steady rate, like a model's tokens (real time: the sim is on loopback). */
function tokens(count: number, everyMs: number, word = (i: number) => `w${i} `): StreamSource {
  return async function* (signal) {
    for (let i = 0; i < count && !signal.aborted; i++) {
      yield word(i);
      await new Promise((resolve) => setTimeout(resolve, everyMs));
    }
  };
}

/** The texts of the chat's messages (service messages have none). */
function texts(chat: number): string[] {
  return sim
    .transcript(chat)
    .messages.flatMap((message) => (message.text === undefined ? [] : [message.text]));
}

/** Waits until the replaced progress message is deleted (a follow-up of the final's send). */
const settled = (chat: number, count: number) =>
  eventually("the progress message is deleted", () => expect(texts(chat)).toHaveLength(count));

const words = (count: number) => Array.from({ length: count }, (_, i) => `w${i} `).join("");

describe("client.streamMessage against the sim", () => {
  it("private chat: Thinking…, draft frames as fast as answered, then one real message; no 429", async () => {
    // Telegram's documented limits only (none for drafts), and a round trip of 40 ms.
    const { dm } = await setup({ rateLimits: { draftsPerSecond: false } });
    sim.faults.setLatency(40);
    const outcome = await client.streamMessage(dm.id, tokens(60, 20)).result;
    expect(outcome).toMatchObject({ status: "delivered", mode: "draft", stopped: false });
    const { events, messages, draft } = sim.transcript(dm);
    const frames = events.filter((event) => event.kind === "draft");
    expect(frames[0]?.text).toBe("");
    for (let i = 1; i < frames.length; i++) {
      expect(frames[i]?.text?.length).toBeGreaterThanOrEqual(frames[i - 1]?.text?.length ?? 0);
    }
    // Each frame goes as the one before it is answered: about one a round trip, not 5 a second.
    const gaps = frames.slice(1).map((frame, i) => frame.atMs - (frames[i]?.atMs ?? 0));
    const median = [...gaps].sort((a, b) => a - b)[Math.floor(gaps.length / 2)] ?? 0;
    expect(median).toBeGreaterThanOrEqual(34);
    expect(median).toBeLessThan(100);
    expect(messages.map((message) => message.text)).toEqual([words(60).trim()]);
    expect(draft).toBeUndefined(); // the message replaced it
    expect(sim.counters().tooManyRequests).toBe(0);
    expect(events.filter((event) => event.kind === "edit")).toHaveLength(0);
  });

  it("under the sim's draft limit (5/s), one 429 teaches the pace: no other, in later streams too", async () => {
    const { dm } = await setup();
    const first = await client.streamMessage(dm.id, tokens(100, 20)).result;
    expect(first).toMatchObject({ status: "delivered", mode: "draft" });
    expect(sim.counters().tooManyRequests).toBe(1);
    expect(client.streams.snapshot().pacedChats).toBe(1);
    const second = await client.streamMessage(dm.id, tokens(100, 20)).result;
    expect(second).toMatchObject({ status: "delivered", mode: "draft" });
    expect(sim.counters().tooManyRequests).toBe(1);
    expect(texts(dm.id)).toEqual([words(100).trim(), words(100).trim()]);
  });

  it("group: a progress message with coalesced edits, finished in place", async () => {
    const { group } = await setup();
    const outcome = await client.streamMessage(group.id, tokens(80, 25)).result;
    expect(outcome).toMatchObject({ status: "delivered", mode: "edit" });
    const { events } = sim.transcript(group);
    expect(events.filter((event) => event.kind === "draft")).toHaveLength(0);
    const edits = events.filter((event) => event.kind === "edit");
    expect(edits.length).toBeGreaterThan(0);
    expect(edits.length).toBeLessThan(10);
    // The progress message became the final: one message, nothing deleted.
    expect(texts(group.id)).toEqual([words(80).trim()]);
    expect(events.filter((event) => event.actor === "bot" && event.kind === "send")).toHaveLength(
      1,
    );
    expect(events.filter((event) => event.kind === "delete")).toHaveLength(0);
    expect(sim.counters().tooManyRequests).toBe(0);
  });

  it("splits a long HTML answer into messages Telegram parses, none over 4096", async () => {
    const { dm } = await setup();
    const paragraph = (i: number) =>
      `<b>Part ${i}</b>: ${"some <i>formatted</i> words &amp; more ".repeat(12)}\n\n`;
    const stream = client.streamMessage(dm.id, undefined, { parseMode: "HTML" });
    for (let i = 0; i < 30; i++) stream.append(paragraph(i));
    const outcome = await stream.end();
    expect(outcome.status).toBe("delivered");
    const { messages } = sim.transcript(dm);
    expect(messages.length).toBeGreaterThanOrEqual(3);
    for (const message of messages) {
      expect(message.text?.length).toBeLessThanOrEqual(4096);
      expect(message.entities?.some((entity) => entity.type === "bold")).toBe(true);
    }
    const shown = messages.map((message) => message.text).join("\n\n");
    for (let i = 0; i < 30; i++) expect(shown).toContain(`Part ${i}:`);
    // Split at paragraph boundaries: every message starts with a part's title.
    for (const message of messages) expect(message.text).toMatch(/^Part \d+:/);
  });

  it("the Stop button aborts the producer; the text so far is the final", async () => {
    const { user, dm } = await setup();
    const stream = client.streamMessage(
      dm.id,
      async function* (signal) {
        for (let i = 0; i < 500 && !signal.aborted; i++) {
          yield `w${i} `;
          await new Promise((resolve) => setTimeout(resolve, 10));
        }
      },
      { canStop: true },
    );
    await eventually("a draft frame with the Stop button shows the first words", () => {
      const draft = sim.transcript(dm).draft;
      expect(draft?.hasStopButton).toBe(true);
      expect(draft?.text.startsWith("w0 w1 w2")).toBe(true);
    });
    sim.stopDraft(user, dm);
    const updates = (await client.getUpdates({ timeout: 0 })) as Update[];
    expect(updates.some((update) => client.streams.handleUpdate(update))).toBe(true);
    const outcome = await stream.result;
    expect(outcome).toMatchObject({ status: "delivered", stopped: true });
    expect(stream.signal.reason).toMatchObject({ code: "ERR_STREAM_STOPPED" });
    const [message] = sim.transcript(dm).messages;
    expect(message?.text?.startsWith("w0 w1 w2")).toBe(true);
    expect(message?.text?.length).toBeLessThan(words(500).length);
  });

  it("falls back to edits where drafts are refused (a method the server lacks)", async () => {
    const { dm } = await setup();
    sim.faults.failNext("sendMessageDraft", 1, { code: 404, description: "Not Found" });
    const outcome = await client.streamMessage(dm.id, tokens(40, 20)).result;
    expect(outcome).toMatchObject({ status: "delivered", mode: "edit" });
    await settled(dm.id, 1);
    expect(texts(dm.id)).toEqual([words(40).trim()]);
    expect(client.streams.snapshot().draftsUnavailable).toBe(true);
  });

  it("the final is never lost: 5xx and 429 on the final send, in a private chat", async () => {
    const { dm } = await setup();
    sim.faults.failNext("sendMessage", 1, { code: 429, retryAfter: 1 });
    sim.faults.failNext("sendMessage", 1, { code: 502 });
    const outcome = await client.streamMessage(dm.id, tokens(20, 10)).result;
    expect(outcome.status).toBe("delivered");
    expect(sim.transcript(dm).messages.map((message) => message.text)).toEqual([words(20).trim()]);
  });

  it("the final is never lost: 5xx on the final send in a group edits the progress message", async () => {
    const { group } = await setup();
    const stream = client.streamMessage(group.id);
    stream.append("first part ");
    await eventually("the progress message is sent", () =>
      expect(texts(group.id)).toEqual(["first part"]),
    );
    sim.faults.failNext("sendMessage", 1, { code: 502 });
    stream.append("and the end");
    const outcome = await stream.end();
    expect(outcome.status).toBe("delivered");
    expect(texts(group.id)).toEqual(["first part and the end"]);
  });

  it("draft 429s hold the chat, and the final still arrives", async () => {
    const { dm } = await setup();
    sim.faults.failNext("sendMessageDraft", 2, { code: 429, retryAfter: 1 });
    const outcome = await client.streamMessage(dm.id, tokens(30, 20)).result;
    expect(outcome).toMatchObject({ status: "delivered", mode: "draft" });
    expect(sim.transcript(dm).messages.map((message) => message.text)).toEqual([words(30).trim()]);
  });
});
