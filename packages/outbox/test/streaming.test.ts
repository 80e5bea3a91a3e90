import { describe, expect, it } from "vitest";
import {
  NetworkError,
  type OutboxError,
  planWrite,
  RetryAfterError,
  StreamRegistry,
  TelegramApiError,
} from "../src/index.js";
import { expectFloorKept, setupStreams } from "./support/stream-transport.js";

const PRIVATE = 42;
const GROUP = -100_7;

const setup = setupStreams;

const apiError = (errorCode: number, description: string) =>
  new TelegramApiError({ method: "sendMessageDraft", errorCode, description });

describe("streaming into a private chat", () => {
  it("shows Thinking…, then draft frames of the latest text as answered, then one real message", async () => {
    const { clock, api, streams } = setup({}, 100);
    const stream = streams.open(PRIVATE);
    await clock.advance(50);
    for (let i = 1; i <= 100; i++) {
      stream.append(`w${i} `);
      await clock.advance(10); // 100 Hz: much faster than the frames
    }
    const outcome = stream.end();
    await clock.runAll();
    const result = await outcome;

    const drafts = api.of("sendMessageDraft");
    expect(drafts[0]?.params.text).toBe("");
    // Each frame starts as the one before it is answered (100 ms), never one frame per piece.
    for (let i = 1; i < drafts.length; i++) {
      expect(drafts[i]?.startedAt).toBe(drafts[i - 1]?.endedAt);
    }
    expect(drafts.length).toBeGreaterThanOrEqual(10);
    expect(drafts.length).toBeLessThanOrEqual(12);
    expect(new Set(drafts.map((call) => call.params.draft_id)).size).toBe(1);
    expect(api.maxInFlight).toBe(1);
    expect(api.of("editMessageText")).toHaveLength(0);
    const full = Array.from({ length: 100 }, (_, i) => `w${i + 1} `).join("");
    expect(api.texts("sendMessage")).toEqual([full]);
    expect(result).toMatchObject({ status: "delivered", mode: "draft", stopped: false });
    expect(result.messages).toHaveLength(1);
    expect(result.draftFrames).toBe(drafts.length);
  });

  it("each frame carries the text as it is when the frame starts", async () => {
    const { clock, api, streams } = setup({}, 100);
    const stream = streams.open(PRIVATE, { thinking: false });
    stream.append("a");
    await clock.advance(50); // the first frame is in flight until 100 ms
    stream.append("b");
    stream.append("c");
    await clock.advance(300);
    stream.end();
    await clock.runAll();
    expect(api.texts("sendMessageDraft")).toEqual(["a", "abc"]);
    expect(api.texts("sendMessage")).toEqual(["abc"]);
  });

  it("sends an unchanged draft again before its 30 s preview runs out", async () => {
    const { clock, api, streams } = setup();
    const stream = streams.open(PRIVATE, { thinking: false });
    stream.append("still thinking");
    await clock.advance(45_000);
    expect(api.texts("sendMessageDraft")).toEqual([
      "still thinking",
      "still thinking",
      "still thinking",
    ]);
    stream.end();
    await clock.runAll();
  });

  it("a short round trip meets the floor: 34 ms between frames' starts on average", async () => {
    const { clock, api, streams } = setup({}, 5);
    const stream = streams.open(PRIVATE, { thinking: false });
    for (let i = 0; i < 100; i++) {
      stream.append("x");
      await clock.advance(10);
    }
    stream.end();
    await clock.runAll();
    const starts = api.of("sendMessageDraft").map((call) => call.startedAt);
    // The first two as the text comes (every 10 ms), then the floor's 34 ms on average; the
    // outbox's 30 a second for the whole bot holds what would pass it in any second.
    expect(starts[1]).toBe(10);
    expectFloorKept(starts);
    for (let i = 30; i < starts.length; i++) {
      expect((starts[i] ?? 0) - (starts[i - 30] ?? 0)).toBeGreaterThanOrEqual(1000);
    }
    expect(starts.length).toBeGreaterThanOrEqual(28);
  });

  it("draftIntervalMs sets the floor", async () => {
    const { clock, api, streams } = setup();
    const stream = streams.open(PRIVATE, { draftIntervalMs: 1000, thinking: false });
    for (let i = 0; i < 30; i++) {
      stream.append("x");
      await clock.advance(100);
    }
    stream.end();
    await clock.runAll();
    // Two in a row (the floor's burst), then one a second over the 3 s of text.
    expect(api.of("sendMessageDraft").length).toBeLessThanOrEqual(5);
    expectFloorKept(
      api.of("sendMessageDraft").map((call) => call.startedAt),
      1000,
    );
  });

  it("a draft 429 holds the chat; the final is still delivered, after the wait", async () => {
    const { clock, api, streams } = setup();
    api.rules.set("sendMessageDraft", (_call, index) =>
      index === 1 ? new RetryAfterError(3000) : undefined,
    );
    const stream = streams.open(PRIVATE);
    stream.append("hello");
    await clock.advance(300);
    stream.append(" world");
    const outcome = stream.end();
    await clock.runAll();
    expect(await outcome).toMatchObject({ status: "delivered" });
    expect(api.texts("sendMessage")).toEqual(["hello world"]);
    const send = api.of("sendMessage")[0];
    expect(send?.startedAt).toBeGreaterThanOrEqual(3000);
  });
});

describe("where drafts are refused", () => {
  it("streams into a group as a progress message with coalesced edits, finished in place", async () => {
    const { clock, api, streams } = setup();
    const stream = streams.open(GROUP);
    for (let i = 1; i <= 200; i++) {
      stream.append(`${i} `);
      await clock.advance(50);
    }
    const outcome = stream.end();
    await clock.runAll();
    const result = await outcome;
    expect(api.of("sendMessageDraft")).toHaveLength(0);
    // 10 s of text: the stream spends at most 4 requests in any 14.4 s (17 a minute, spread),
    // and every edit carries the latest text.
    // The last edit is the final; the progress edits before it are spread.
    const edits = api.of("editMessageText");
    expect(edits.length).toBeGreaterThanOrEqual(3);
    expect(edits.length).toBeLessThanOrEqual(5);
    const starts = api.calls.map((c) => c.startedAt);
    for (let i = 4; i < starts.length - 1; i++) {
      expect((starts[i] ?? 0) - (starts[i - 4] ?? 0)).toBeGreaterThanOrEqual(14_400);
    }
    const full = Array.from({ length: 200 }, (_, i) => `${i + 1} `).join("");
    // One message from start to end: the progress message became the final, nothing deleted.
    expect(api.of("sendMessage")).toHaveLength(1);
    expect(api.texts("editMessageText").at(-1)).toBe(full);
    expect(api.of("deleteMessage")).toHaveLength(0);
    expect(result).toMatchObject({ status: "delivered", mode: "edit" });
    expect(result.messages.map((message) => message.text)).toEqual([full]);
    expect(result.edits).toBe(edits.length - 1);
  });

  it("below a newer message the final is sent as a new message, not edited out of sight", async () => {
    const { clock, api, streams } = setup({ groupChatRps: 0 });
    const stream = streams.open(GROUP);
    stream.append("half");
    await clock.advance(100);
    // Someone wrote in the group after the progress message (id 1) appeared.
    streams.handleUpdate({
      update_id: 7,
      message: {
        message_id: 2,
        date: 0,
        chat: { id: GROUP, type: "supergroup", title: "G" },
        from: { id: 5, is_bot: false, first_name: "B" },
        text: "meanwhile",
      },
    });
    stream.append(" and the rest");
    stream.end();
    await clock.runAll();
    const result = await stream.result;
    expect(api.texts("sendMessage")).toEqual(["half", "half and the rest"]);
    expect(api.of("deleteMessage")).toHaveLength(1);
    expect(result.messages.map((message) => message.text)).toEqual(["half and the rest"]);
  });

  it("finishInPlace: false sends the final as a new message and then deletes the progress", async () => {
    const { clock, api, streams } = setup({ groupChatRps: 0 });
    const stream = streams.open(GROUP, { finishInPlace: false });
    stream.append("half");
    await clock.advance(100);
    stream.append(" and the rest");
    await clock.advance(100);
    stream.end();
    await clock.runAll();
    const result = await stream.result;
    expect(api.texts("sendMessage")).toEqual(["half", "half and the rest"]);
    const methods = api.calls.map((call) => call.method);
    expect(methods.lastIndexOf("sendMessage")).toBeLessThan(methods.indexOf("deleteMessage"));
    expect(result.messages.map((message) => message.text)).toEqual(["half and the rest"]);
  });

  it("a final that cannot be edited in is sent, and the progress message deleted", async () => {
    const { clock, api, streams } = setup({ groupChatRps: 0 });
    const stream = streams.open(GROUP);
    stream.append("half");
    await clock.advance(100);
    api.rules.set("editMessageText", () => apiError(400, "Bad Request: message to edit not found"));
    stream.append(" and the rest");
    stream.end();
    await clock.runAll();
    const result = await stream.result;
    expect(result.status).toBe("delivered");
    expect(api.texts("sendMessage")).toEqual(["half", "half and the rest"]);
    expect(api.of("deleteMessage")).toHaveLength(1);
  });

  it("a delete of the progress message drops the edit the stream holds back", async () => {
    const { clock, api, streams } = setup();
    const stream = streams.open(GROUP);
    stream.append("first part");
    await clock.advance(100);
    const progress = api.of("sendMessage")[0]?.params;
    expect(progress?.text).toBe("first part");
    // The stream spaces its edits (3.6 s in a group): this one waits in the stream itself.
    stream.append(" and more");
    await clock.advance(1_000);
    expect(api.of("editMessageText")).toHaveLength(0);
    // The bot deletes the progress message (message 1), as the grammY transformer reports it.
    streams.noteWrite(planWrite("deleteMessage", { chat_id: GROUP, message_id: 1 }));
    await clock.advance(10_000);
    stream.append(" and the end");
    stream.end();
    await clock.runAll();
    const result = await stream.result;
    // No edit of the deleted message, no new progress message: the final is a message of its own.
    expect(api.of("editMessageText")).toHaveLength(0);
    expect(api.of("deleteMessage")).toHaveLength(0);
    expect(api.texts("sendMessage")).toEqual(["first part", "first part and more and the end"]);
    expect(result).toMatchObject({ status: "delivered", edits: 0 });
    expect(result.messages.map((message) => message.message_id)).toEqual([2]);
  });

  it("a write that supersedes no edit of its progress message leaves a stream alone", async () => {
    const { clock, api, streams } = setup();
    const stream = streams.open(GROUP);
    stream.append("first part");
    await clock.advance(100);
    stream.append(" and more");
    streams.noteWrite(planWrite("deleteMessage", { chat_id: GROUP, message_id: 99 }));
    streams.noteWrite(planWrite("deleteMessage", { chat_id: PRIVATE, message_id: 1 }));
    streams.noteWrite(planWrite("editMessageText", { chat_id: GROUP, message_id: 1, text: "x" }));
    await clock.advance(4_000);
    expect(api.texts("editMessageText")).toEqual(["first part and more"]);
    stream.end();
    await clock.runAll();
    expect((await stream.result).messages.map((message) => message.message_id)).toEqual([1]);
  });

  it("spaces a group stream's edits evenly: no gap of seconds after a burst", async () => {
    const { clock, api, streams } = setup();
    const stream = streams.open(GROUP);
    for (let i = 1; i <= 600; i++) {
      stream.append(`${i} `);
      await clock.advance(50);
    }
    stream.end();
    await clock.runAll();
    // 30 s of text: one request every 3.6 s (17 a minute) from the first on, never a burst of
    // them followed by a gap of 10.8 s.
    const starts = api.calls.filter((c) => c.method !== "deleteMessage").map((c) => c.startedAt);
    expect(starts.length).toBeGreaterThanOrEqual(8);
    for (let i = 1; i < starts.length - 1; i++) {
      const gap = (starts[i] ?? 0) - (starts[i - 1] ?? 0);
      expect(gap).toBeGreaterThanOrEqual(3_600);
      expect(gap).toBeLessThanOrEqual(3_600 + 100);
    }
  });

  it("a split in a group spends no more than its share: the next part's send, paced", async () => {
    const { clock, api, streams } = setup();
    const stream = streams.open(GROUP, { maxTextLength: 400 });
    for (let i = 1; i <= 1_200; i++) {
      stream.append(`${i} `);
      await clock.advance(50);
    }
    stream.end();
    await clock.runAll();
    const outcome = await stream.result;
    expect(outcome.status).toBe("delivered");
    const words = outcome.messages.flatMap((message) => (message.text ?? "").split(/\s+/u));
    expect(words.filter((word) => word !== "")).toEqual(
      Array.from({ length: 1_200 }, (_, i) => `${i + 1}`),
    );
    // 60 s of text, a new message every ~400 characters: every request of the stream (edits, the
    // last edit of each part, the send of the next) 3.6 s after the one before, never a gap of
    // 7 s after a split, until the end (the final's requests never wait).
    expect(api.of("sendMessage").length).toBeGreaterThanOrEqual(10);
    const starts = api.calls.map((call) => call.startedAt).filter((at) => at < 60_000);
    expect(starts.length).toBe(17);
    for (let i = 1; i < starts.length; i++) {
      const gap = (starts[i] ?? 0) - (starts[i - 1] ?? 0);
      expect(gap).toBeGreaterThanOrEqual(3_600);
      expect(gap).toBeLessThanOrEqual(3_600 + 100);
    }
    // A part ends where its progress message showed it (at a space, past half the limit): the
    // text after it goes out with the next send, so no word waits two intervals.
    const firstShown = new Map<number, number>();
    for (const call of api.calls) {
      for (const word of String(call.params.text ?? "").split(/\s+/u)) {
        if (word !== "" && !firstShown.has(Number(word)))
          firstShown.set(Number(word), call.startedAt);
      }
    }
    for (let i = 1; i <= 1_200; i++) {
      const appendedAt = (i - 1) * 50;
      if (appendedAt > 56_000) break;
      expect((firstShown.get(i) ?? Number.POSITIVE_INFINITY) - appendedAt).toBeLessThanOrEqual(
        3_600 + 50,
      );
    }
  });

  it("falls back to edits on TEXTDRAFT_PEER_INVALID and remembers the chat", async () => {
    const { clock, api, streams } = setup({ privateChatRps: 0 });
    api.rules.set("sendMessageDraft", () => apiError(400, "Bad Request: TEXTDRAFT_PEER_INVALID"));
    const first = streams.open(PRIVATE);
    first.append("one");
    await clock.advance(500);
    first.append(" two");
    first.end();
    await clock.runAll();
    expect((await first.result).mode).toBe("edit");
    expect(api.texts("sendMessage")).toEqual(["one"]);
    expect(api.texts("editMessageText")).toEqual(["one two"]);
    expect(streams.snapshot()).toMatchObject({ refusedChats: 1, draftsUnavailable: false });

    const drafts = api.of("sendMessageDraft").length;
    const second = streams.open(PRIVATE);
    second.append("again");
    second.end();
    await clock.runAll();
    expect(api.of("sendMessageDraft")).toHaveLength(drafts);
    expect((await second.result).mode).toBe("edit");
  });

  it("a server without sendMessageDraft (404) turns drafts off for every chat", async () => {
    const { clock, api, streams } = setup();
    api.rules.set("sendMessageDraft", () => apiError(404, "Not Found: method not found"));
    const stream = streams.open(PRIVATE);
    stream.append("x");
    stream.end();
    await clock.runAll();
    expect(await stream.result).toMatchObject({ status: "delivered", mode: "edit" });
    expect(streams.snapshot().draftsUnavailable).toBe(true);
    expect(streams.open(43).snapshot().mode).toBe("edit");
  });

  it("drafts: false streams a private chat with edits", async () => {
    const { streams } = setup();
    expect(streams.open(PRIVATE, { drafts: false }).snapshot().mode).toBe("edit");
  });
});

describe("long texts", () => {
  it("continue in the next message at a safe boundary; the drafts get a new id", async () => {
    const { clock, api, streams } = setup({ privateChatRps: 0 });
    const stream = streams.open(PRIVATE, { maxTextLength: 40, thinking: false });
    const words = Array.from({ length: 30 }, (_, i) => `word${i}`);
    for (const word of words) {
      stream.append(`${word} `);
      await clock.advance(100);
    }
    stream.end();
    await clock.runAll();
    const sent = api.texts("sendMessage");
    expect(sent.length).toBeGreaterThan(3);
    for (const text of sent) expect(text.length).toBeLessThanOrEqual(40);
    expect(sent.join("")).toBe(words.map((w) => `${w} `).join(""));
    for (const text of sent.slice(0, -1)) expect(text.endsWith(" ")).toBe(true);
    const ids = new Set(api.of("sendMessageDraft").map((call) => call.params.draft_id));
    expect(ids.size).toBeGreaterThan(1);
    expect((await stream.result).messages).toHaveLength(sent.length);
  });

  it("a draft never previews text its message then lacks: the cut comes after what it showed", async () => {
    const { clock, api, streams } = setup({ privateChatRps: 0 });
    const stream = streams.open(PRIVATE, { maxTextLength: 40, thinking: false });
    // A paragraph break early in the second half, then words: splitting the whole text alone
    // would end the first message at the break, after a draft already showed the words past it.
    stream.append(`${"a".repeat(22)}\n\nbb cc dd ee`);
    await clock.advance(250);
    const shown = api.texts("sendMessageDraft").at(-1) as string;
    expect(shown).toBe(`${"a".repeat(22)}\n\nbb cc dd ee`);
    stream.append(" ff gg hh ii jj kk");
    stream.end();
    await clock.runAll();
    const messages = api.texts("sendMessage");
    expect(messages).toHaveLength(2);
    expect(messages[0]?.startsWith(shown)).toBe(true);
    expect(messages[0]?.length).toBeLessThanOrEqual(40);
    expect(messages.join("")).toBe(`${"a".repeat(22)}\n\nbb cc dd ee ff gg hh ii jj kk`);
  });

  it("in a group, the progress message takes its last chunk and a new one continues", async () => {
    const { clock, streams } = setup({ groupChatRps: 0, privateChatRps: 0 });
    const stream = streams.open(GROUP, { maxTextLength: 30 });
    for (let i = 0; i < 20; i++) {
      stream.append(`part${i} `);
      await clock.advance(100);
    }
    stream.end();
    await clock.runAll();
    const result = await stream.result;
    const texts = result.messages.map((message) => message.text);
    expect(texts.join("")).toBe(Array.from({ length: 20 }, (_, i) => `part${i} `).join(""));
    for (const text of texts) expect(text.length).toBeLessThanOrEqual(30);
  });
});

describe("texts with nothing to show", () => {
  it("a whitespace-only answer sends no message and ends empty", async () => {
    const { clock, api, streams } = setup();
    const stream = streams.open(GROUP);
    stream.append(" \n ");
    stream.end();
    await clock.runAll();
    expect(await stream.result).toMatchObject({ status: "empty", messages: [] });
    expect(api.calls).toHaveLength(0);
  });

  it("markup with no text counts as empty; a progress message whose text was taken back goes", async () => {
    const { clock, api, streams } = setup({ groupChatRps: 0 });
    const stream = streams.open(GROUP, { parseMode: "HTML" });
    stream.append("<b>draft</b>");
    await clock.advance(100);
    expect(api.texts("sendMessage")).toEqual(["<b>draft</b>"]);
    stream.replace("<b> </b>");
    stream.end();
    await clock.runAll();
    expect(await stream.result).toMatchObject({ status: "empty" });
    expect(api.of("deleteMessage")).toHaveLength(1);
    expect(api.of("editMessageText")).toHaveLength(0);
  });

  it("a chunk with nothing to show between two others is left out, not the end", async () => {
    const { clock, api, streams } = setup({ privateChatRps: 0 });
    const stream = streams.open(PRIVATE, { maxTextLength: 16, thinking: false });
    stream.append(`${"a".repeat(14)}\n\n${" ".repeat(16)}\n\nthe end`);
    stream.end();
    await clock.runAll();
    const result = await stream.result;
    expect(result.status).toBe("delivered");
    expect(api.texts("sendMessage").map((text) => text.trim())).toEqual([
      "a".repeat(14),
      "the end",
    ]);
  });
});

describe("the Stop button", () => {
  it("aborts the producer's signal and sends the text so far as the final", async () => {
    const { clock, api, streams } = setup();
    const stream = streams.open(PRIVATE, { canStop: true });
    stream.append("partial answer");
    await clock.advance(300);
    const draft = api.of("sendMessageDraft").at(-1);
    expect(draft?.params).toMatchObject({ can_stop: true, keep_on_stop: true });
    const handled = streams.handleUpdate({
      update_id: 1,
      stopped_message_generation: {
        chat: { id: PRIVATE, type: "private", first_name: "A" },
        draft_id: draft?.params.draft_id as number,
      },
    });
    expect(handled).toBe(true);
    expect(stream.signal.aborted).toBe(true);
    expect((stream.signal.reason as OutboxError).code).toBe("ERR_STREAM_STOPPED");
    expect(stream.append(" more")).toBe(false);
    await clock.runAll();
    expect(await stream.result).toMatchObject({ status: "delivered", stopped: true });
    expect(api.texts("sendMessage")).toEqual(["partial answer"]);
    expect(streams.snapshot()).toMatchObject({ active: 0, stopsRouted: 1 });
  });

  it("a Stop for an unknown draft, or any other update, is not handled", () => {
    const { streams } = setup();
    expect(streams.handleUpdate({ update_id: 1 })).toBe(false);
    expect(
      streams.handleUpdate({
        update_id: 2,
        stopped_message_generation: {
          chat: { id: PRIVATE, type: "private", first_name: "A" },
          draft_id: 999,
        },
      }),
    ).toBe(false);
  });

  it("pipe() hands a function source the signal, and ends with the source", async () => {
    const { clock, api, streams } = setup();
    let sawAbort = false;
    const stream = streams.pipe(PRIVATE, async function* (signal) {
      for (let i = 0; i < 1000 && !signal.aborted; i++) {
        yield `${i} `;
        await clock.sleep(20);
      }
      sawAbort = signal.aborted;
    });
    await clock.advance(1000);
    const draftId = stream.draftId as number;
    streams.handleUpdate({
      update_id: 1,
      stopped_message_generation: {
        chat: { id: PRIVATE, type: "private", first_name: "A" },
        draft_id: draftId,
      },
    });
    await clock.runAll();
    const result = await stream.result;
    expect(sawAbort).toBe(true);
    expect(result.stopped).toBe(true);
    expect(api.texts("sendMessage")).toHaveLength(1);
    expect(api.texts("sendMessage")[0]?.startsWith("0 1 2 ")).toBe(true);
  });

  it("pipe() takes @grammyjs/stream's pieces: text with entities counted from the start", async () => {
    const { clock, api, streams } = setup();
    const stream = streams.pipe(PRIVATE, [
      "Hello, ",
      { text: "world", entities: [{ type: "bold", offset: 7, length: 5 }] },
      "!",
    ]);
    await clock.runAll();
    expect((await stream.result).status).toBe("delivered");
    expect(api.of("sendMessage").map((call) => call.params)).toEqual([
      {
        chat_id: PRIVATE,
        text: "Hello, world!",
        entities: [{ type: "bold", offset: 7, length: 5 }],
      },
    ]);
  });

  it("a piece that is neither a string nor { text } ends the stream with a TypeError", async () => {
    const { clock, api, streams } = setup();
    const stream = streams.pipe(PRIVATE, ["fine ", 42 as unknown as string]);
    await clock.runAll();
    const result = await stream.result;
    expect(result.sourceError).toBeInstanceOf(TypeError);
    expect(String(result.sourceError)).toContain("got 42");
    expect(api.texts("sendMessage")).toEqual(["fine "]);
  });

  it("a source that throws ends with the text so far and the error", async () => {
    const { clock, api, streams } = setup();
    const boom = new Error("model crashed");
    const stream = streams.pipe(PRIVATE, async function* () {
      yield "half ";
      throw boom;
    });
    await clock.runAll();
    expect(await stream.result).toMatchObject({ status: "delivered", sourceError: boom });
    expect(api.texts("sendMessage")).toEqual(["half "]);
  });
});

describe("the final is never lost", () => {
  it("draft mode: a 5xx on the final send is sent once more", async () => {
    const { clock, api, streams } = setup();
    api.rules.set("sendMessage", (_call, index) =>
      index === 0 ? apiError(502, "Bad Gateway") : undefined,
    );
    const stream = streams.open(PRIVATE);
    stream.append("answer");
    stream.end();
    await clock.runAll();
    expect(await stream.result).toMatchObject({ status: "delivered" });
    expect(api.texts("sendMessage")).toEqual(["answer", "answer"]);
  });

  it("edit mode: a final send that fails becomes the progress message's last edit", async () => {
    const { clock, api, streams } = setup();
    const stream = streams.open(GROUP);
    stream.append("progress");
    await clock.advance(100);
    api.rules.set("sendMessage", () => apiError(502, "Bad Gateway"));
    stream.append(" and the end");
    stream.end();
    await clock.runAll();
    const result = await stream.result;
    expect(result.status).toBe("delivered");
    expect(api.texts("editMessageText").at(-1)).toBe("progress and the end");
    expect(result.messages.map((m) => m.text)).toEqual(["progress and the end"]);
  });

  it("a final that can be neither sent nor edited is a failed outcome", async () => {
    const { clock, api, streams } = setup();
    api.rules.set(
      "sendMessage",
      () =>
        new NetworkError("reset", {
          method: "sendMessage",
          failure: "connection-lost",
          mayHaveReachedServer: true,
        }),
    );
    const stream = streams.open(PRIVATE);
    stream.append("answer");
    stream.end();
    await clock.runAll();
    expect(await stream.result).toMatchObject({ status: "failed", maybeDelivered: true });
  });

  it("a closed outbox ends the stream as closed", async () => {
    const { clock, outbox, streams } = setup();
    const stream = streams.open(GROUP);
    await outbox.close({ drain: false });
    stream.append("late");
    stream.end();
    await clock.runAll();
    expect((await stream.result).status).toBe("closed");
  });
});

describe("cancellation and options", () => {
  it("aborting rejects the result with the reason and sends nothing more", async () => {
    const { clock, api, streams } = setup();
    const controller = new AbortController();
    const stream = streams.open(PRIVATE, { signal: controller.signal });
    stream.append("x");
    await clock.advance(300);
    const calls = api.calls.length;
    const reason = new Error("user left");
    controller.abort(reason);
    await expect(stream.result).rejects.toBe(reason);
    await clock.runAll();
    expect(api.calls.length).toBeLessThanOrEqual(calls + 1);
    expect(api.of("sendMessage")).toHaveLength(0);
    expect(stream.signal.aborted).toBe(true);
  });

  it("checks options whole", () => {
    const { streams } = setup();
    expect(() => streams.open(PRIVATE, { draftIntervalMs: -1 })).toThrow(
      "Expected `draftIntervalMs` to be a finite number >= 0, got -1",
    );
    expect(() => streams.open(PRIVATE, { canstop: true } as never)).toThrow(
      "did you mean `canStop`?",
    );
    expect(() => streams.open(PRIVATE, { parseMode: "html" as never })).toThrow(TypeError);
    expect(() => streams.open(PRIVATE, { params: { text: "x" } })).toThrow(TypeError);
    expect(() => streams.open(PRIVATE, { maxTextLength: 5000 })).toThrow(RangeError);
    expect(() => streams.pipe(PRIVATE, 5 as never)).toThrow(TypeError);
    expect(() => streams.open(PRIVATE).append(5 as never)).toThrow(TypeError);
    expect(() => new StreamRegistry({ transport: () => Promise.resolve() } as never)).toThrow(
      TypeError,
    );
  });
});
