import { eventually } from "@telepace/testing";
import { describe, expect, it } from "vitest";
import {
  OutboxError,
  type TelegramApiError,
  TelegramClient,
  TextTooLongError,
} from "../src/index.js";
import { apiError, message, ok } from "./support/bot-server.js";
import { connect, TOKEN } from "./support/client.js";

describe("TelegramClient: requests and envelopes", { timeout: 20_000 }, () => {
  it("sends JSON to /bot<token>/<method> and delivers the envelope's result", async () => {
    const { server, client } = await connect((request, res) =>
      ok(res, message(41, 7, String(request.params.text))),
    );
    const outcome = await client.sendMessage(7, "hi", {
      reply_markup: { inline_keyboard: [[{ text: "Go", callback_data: "go" }]] },
    });
    expect(outcome).toMatchObject({ status: "delivered", notModified: false, attempts: 1 });
    if (outcome.status !== "delivered" || outcome.notModified) throw new Error("unreachable");
    expect(outcome.result.message_id).toBe(41);
    const [request] = server.requests;
    expect(request).toMatchObject({ method: "sendMessage", token: TOKEN, httpMethod: "POST" });
    expect(request?.headers["content-type"]).toBe("application/json");
    expect(request?.params).toEqual({
      chat_id: 7,
      text: "hi",
      reply_markup: { inline_keyboard: [[{ text: "Go", callback_data: "go" }]] },
    });
  });

  it("call() is raw: it resolves the result or throws a TelegramApiError with the envelope's fields", async () => {
    const { server, client } = await connect((request, res) =>
      request.method === "getMe"
        ? ok(res, { id: 1, is_bot: true, first_name: "bot", username: "b" })
        : apiError(res, 400, "Bad Request: chat not found"),
    );
    expect(await client.call("getMe")).toMatchObject({ id: 1, is_bot: true });
    const error = (await client
      .call("sendMessage", { chat_id: 5, text: "x" })
      .catch((e: unknown) => e)) as TelegramApiError;
    expect(error).toMatchObject({
      name: "TelegramApiError",
      code: "ERR_TELEGRAM_API",
      method: "sendMessage",
      errorCode: 400,
      description: "Bad Request: chat not found",
      parameters: {},
    });
    expect(error.message).toBe("sendMessage failed: 400 Bad Request: chat not found");
    expect(server.methods).toEqual(["getMe", "sendMessage"]);
  });

  it("editMessageText, deleteMessage, answerCallbackQuery and sendChatAction send their parameters", async () => {
    const { server, client } = await connect((request, res) =>
      ok(res, request.method === "editMessageText" ? message(3, 7, "e") : true),
    );
    expect((await client.editMessageText(7, 3, "edited", { parse_mode: "HTML" })).status).toBe(
      "delivered",
    );
    expect(await client.deleteMessage(7, 3)).toMatchObject({ status: "delivered", result: true });
    expect(await client.answerCallbackQuery("cb-1", { text: "done" })).toMatchObject({
      status: "delivered",
      result: true,
    });
    expect(await client.sendChatAction(7, "typing")).toMatchObject({
      status: "delivered",
      result: true,
    });
    expect(server.requests.map((r) => [r.method, r.params])).toEqual([
      ["editMessageText", { chat_id: 7, message_id: 3, text: "edited", parse_mode: "HTML" }],
      ["deleteMessage", { chat_id: 7, message_id: 3 }],
      ["answerCallbackQuery", { callback_query_id: "cb-1", text: "done" }],
      ["sendChatAction", { chat_id: 7, action: "typing" }],
    ]);
  });

  it("write() sends any other method through the outbox, keyed and paced by params.chat_id", async () => {
    const { server, client } = await connect((_request, res) => ok(res, true));
    const outcome = await client.write(
      "setMessageReaction",
      { chat_id: 7, message_id: 3, reaction: [{ type: "emoji", emoji: "👍" }] },
      { key: "react:3", idempotent: true },
    );
    expect(outcome).toMatchObject({ status: "delivered", result: true });
    expect(server.requests[0]?.params).toMatchObject({ chat_id: 7, message_id: 3 });
    expect(client.outbox.snapshot().counters.delivered).toBe(1);
  });

  it("an apiRoot with a path prefix is kept", async () => {
    const { server } = await connect((_request, res) => ok(res, { id: 1 }));
    const client = new TelegramClient({ token: TOKEN, apiRoot: `${server.url}/proxy/tg/` });
    try {
      await client.getMe();
      expect(server.requests[0]?.method).toBe("getMe");
    } finally {
      await client.close();
    }
  });
});

describe("TelegramClient: bad input", { timeout: 20_000 }, () => {
  it("text over 4096 UTF-16 units throws TextTooLongError synchronously, before any request", async () => {
    const { server, client } = await connect();
    const long = "😀".repeat(2_049); // 4098 UTF-16 code units, 2049 characters
    let error: unknown;
    try {
      void client.sendMessage(1, long);
    } catch (thrown) {
      error = thrown;
    }
    expect(error).toBeInstanceOf(TextTooLongError);
    expect(error).toMatchObject({
      code: "ERR_TEXT_TOO_LONG",
      field: "text",
      length: 4_098,
      limit: 4_096,
    });
    expect((error as Error).message).toBe(
      "Expected `text` to be at most 4096 UTF-16 code units, got 4098",
    );
    expect(() => client.editMessageText(1, 2, "x".repeat(4_097))).toThrow(TextTooLongError);
    expect(() => client.sendDocument(1, Buffer.from("x"), { caption: "c".repeat(1_025) })).toThrow(
      expect.objectContaining({ field: "caption", limit: 1_024 }),
    );
    expect((await client.sendMessage(1, "x".repeat(4_096))).status).toBe("delivered");
    expect(server.requests).toHaveLength(1);
  });

  it("with parse_mode the length is left to Telegram (markup does not count)", async () => {
    const { server, client } = await connect();
    const html = `<b>${"x".repeat(4_090)}</b>`;
    expect((await client.sendMessage(1, html, { parse_mode: "HTML" })).status).toBe("delivered");
    expect(server.requests).toHaveLength(1);
  });

  it("empty or non-string text, and bad ids, throw TypeError/RangeError naming the argument", async () => {
    const { client } = await connect();
    expect(() => client.sendMessage(1, "")).toThrow(
      new RangeError("Expected `text` to be a non-empty string"),
    );
    expect(() => client.sendMessage(1, 5 as never)).toThrow(
      new TypeError("Expected `text` to be a string, got 5"),
    );
    expect(() => client.editMessageText(1, 0, "x")).toThrow(
      new RangeError("Expected `messageId` to be an integer >= 1, got 0"),
    );
    expect(() => client.sendMessage(1.5, "x")).toThrow(RangeError);
    expect(() => client.answerCallbackQuery("")).toThrow(TypeError);
  });

  it("invalid options throw, and the token is never echoed", () => {
    expect(() => new TelegramClient({ token: "12 34" })).toThrow(
      new TypeError(
        "Expected `token` to be a bot token (no spaces or slashes), got a string of 5 characters",
      ),
    );
    expect(() => new TelegramClient({ token: 5 as never })).toThrow(/got number/);
    expect(() => new TelegramClient({ token: TOKEN, apiRoot: "ftp://x" })).toThrow(
      new TypeError("Expected `apiRoot` to be an http(s) URL, got ftp://x"),
    );
    expect(() => new TelegramClient({ token: TOKEN, apiRoot: "not a url" })).toThrow(TypeError);
    expect(() => new TelegramClient({ token: TOKEN, requestTimeoutMs: -1 })).toThrow(
      new RangeError("Expected `requestTimeoutMs` to be a finite number >= 0, got -1"),
    );
    expect(() => new TelegramClient({ token: TOKEN, maxConnections: 0 })).toThrow(RangeError);
    expect(() => new TelegramClient({ token: TOKEN, outbox: { maxInFlight: 0 } })).toThrow(
      new RangeError("Expected `maxInFlight` to be an integer >= 1, got 0"),
    );
  });
});

describe("TelegramClient: close", { timeout: 20_000 }, () => {
  it("flushes pending writes, then closes the pool; later reads throw and writes resolve closed", async () => {
    const { server, client } = await connect();
    const sends = [1, 2, 3].map((n) => client.sendMessage(1, `m${n}`));
    await client.close();
    expect((await Promise.all(sends)).map((o) => o.status)).toEqual([
      "delivered",
      "delivered",
      "delivered",
    ]);
    expect(server.methods).toEqual(["sendMessage", "sendMessage", "sendMessage"]);
    await expect(client.getMe()).rejects.toMatchObject({ code: "ERR_OUTBOX_CLOSED" });
    await expect(client.call("getMe")).rejects.toBeInstanceOf(OutboxError);
    expect(await client.sendMessage(1, "late")).toEqual({ status: "closed", attempts: 0 });
    expect(client.close()).toBe(client.close());
  });

  it("destroys the pool when a read outlives the deadline", async () => {
    const { server, client } = await connect(() => {
      // never answers
    });
    const poll = client.getUpdates({ timeout: 30 });
    await eventually("the poll reached the server", () => expect(server.requests).toHaveLength(1));
    await client.close({ timeoutMs: 100 });
    await expect(poll).rejects.toMatchObject({ code: "ERR_NETWORK", method: "getUpdates" });
  });
});
