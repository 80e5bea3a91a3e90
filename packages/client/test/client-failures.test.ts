import { createServer } from "node:net";
import { ManualClock } from "@telepace/core";
import type { OutboxFailed } from "@telepace/outbox";
import { eventually } from "@telepace/testing";
import { describe, expect, it } from "vitest";
import {
  ChatMigratedError,
  ForbiddenError,
  NetworkError,
  RetryAfterError,
  TelegramClient,
} from "../src/index.js";
import { apiError, message, ok } from "./support/bot-server.js";
import { connect, TOKEN } from "./support/client.js";

const failedError = (outcome: unknown) => (outcome as OutboxFailed<Error>).error;

describe("TelegramClient: 429", { timeout: 20_000 }, () => {
  it("a 429 in the body freezes the chat for retry_after, then the write is retried in place", async () => {
    const clock = new ManualClock();
    let calls = 0;
    const { server, client } = await connect(
      (_request, res) =>
        calls++ === 0
          ? apiError(
              res,
              429,
              "Too Many Requests: retry after 3",
              { retry_after: 3 },
              { "retry-after": "3" },
            )
          : ok(res, message(9, 1, "x")),
      { clock },
    );
    const send = client.sendMessage(1, "hello");
    await eventually("the outbox saw a 429", () =>
      expect(client.outbox.snapshot().counters.rateLimited).toBe(1),
    );
    expect(client.outbox.snapshot().chats[0]).toMatchObject({
      chat: "1",
      frozenForMs: 3_000,
      pending: 1,
    });
    await clock.advance(2_999);
    expect(server.requests).toHaveLength(1);
    await clock.advance(1);
    expect(await send).toMatchObject({ status: "delivered", attempts: 2 });
    expect(server.requests).toHaveLength(2);
  });

  it("reads the Retry-After header when the body is not an envelope, and 5 s when neither says", async () => {
    const { client } = await connect((request, res) => {
      res.writeHead(429, request.params.text === "header" ? { "retry-after": "7" } : {});
      res.end("<html>slow down</html>");
    });
    const fromHeader = await client
      .call("sendMessage", { chat_id: 1, text: "header" })
      .catch((e: unknown) => e);
    expect(fromHeader).toBeInstanceOf(RetryAfterError);
    expect(fromHeader).toMatchObject({
      code: "ERR_RETRY_AFTER",
      retryAfterMs: 7_000,
      method: "sendMessage",
    });
    const fallback = await client
      .call("sendMessage", { chat_id: 1, text: "none" })
      .catch((e: unknown) => e);
    expect(fallback).toMatchObject({ retryAfterMs: 5_000 });
  });

  it("a 429 envelope without parameters falls back to the header, then to 5 s", async () => {
    const { client } = await connect((_request, res) =>
      apiError(res, 429, "Too Many Requests", undefined, { "retry-after": "2" }),
    );
    await expect(client.call("getMe")).rejects.toMatchObject({
      retryAfterMs: 2_000,
      description: "Too Many Requests",
    });
  });
});

describe("TelegramClient: transport failures", { timeout: 20_000 }, () => {
  it("malformed JSON: a send fails as maybe-delivered and is not resent; an edit is retried", async () => {
    let broken = true;
    const { server, client } = await connect((request, res) => {
      if (broken) {
        res.writeHead(200, { "content-type": "application/json" });
        res.end('{"ok":true,"result":');
        if (request.method === "editMessageText") broken = false;
        return;
      }
      ok(res, message(2, 1, "x"));
    });
    const send = await client.sendMessage(1, "once");
    expect(send).toMatchObject({ status: "failed", maybeDelivered: true, attempts: 1 });
    expect(failedError(send)).toMatchObject({
      code: "ERR_NETWORK",
      failure: "bad-response",
      mayHaveReachedServer: true,
      statusCode: 200,
    });
    const edit = await client.editMessageText(1, 2, "again");
    expect(edit).toMatchObject({ status: "delivered", attempts: 2 });
    expect(server.methods).toEqual(["sendMessage", "editMessageText", "editMessageText"]);
  });

  it("a connection reset after the request was sent: maybe-delivered for a send, retried for a delete", async () => {
    let resets = 2;
    const { server, client } = await connect((request, res) => {
      if (resets-- > 0) {
        res.socket?.destroy();
        return;
      }
      ok(res, request.method === "deleteMessage" ? true : message(1, 1, "x"));
    });
    const send = await client.sendMessage(1, "hi");
    expect(send).toMatchObject({ status: "failed", maybeDelivered: true });
    const error = failedError(send) as NetworkError;
    expect(error).toBeInstanceOf(NetworkError);
    expect(error).toMatchObject({
      failure: "connection-lost",
      mayHaveReachedServer: true,
      method: "sendMessage",
    });
    expect(error.cause).toMatchObject({ code: "UND_ERR_SOCKET" });
    const del = await client.deleteMessage(1, 5);
    expect(del).toMatchObject({ status: "delivered", attempts: 2 });
    expect(server.methods).toEqual(["sendMessage", "deleteMessage", "deleteMessage"]);
  });

  it("connection refused never left: even a send is retried (with backoff) until it gets through", async () => {
    const port = await new Promise<number>((resolve) => {
      const probe = createServer().listen(0, "127.0.0.1", () => {
        const { port: free } = probe.address() as { port: number };
        probe.close(() => resolve(free));
      });
    });
    const client = new TelegramClient({
      token: TOKEN,
      apiRoot: `http://127.0.0.1:${port}`,
      outbox: { privateChatRps: 0, maxAttempts: 3, retryBaseDelayMs: 0 },
    });
    try {
      const outcome = await client.sendMessage(1, "hi");
      expect(outcome).toMatchObject({ status: "failed", attempts: 3, maybeDelivered: false });
      expect(failedError(outcome)).toMatchObject({
        failure: "connect",
        mayHaveReachedServer: false,
      });
      expect(client.outbox.snapshot().counters).toMatchObject({ executed: 3, retries: 2 });
    } finally {
      await client.close();
    }
  });

  it("times out on the injected clock: a timed-out send is maybe-delivered", async () => {
    const clock = new ManualClock();
    const { server, client } = await connect(
      () => {
        // never answers
      },
      { clock, requestTimeoutMs: 5_000 },
    );
    const send = client.sendMessage(1, "slow");
    await eventually("a request arrived", () => expect(server.requests).toHaveLength(1));
    await clock.advance(4_999);
    expect(client.outbox.snapshot().inFlight).toBe(1);
    await clock.advance(1);
    const outcome = await send;
    expect(outcome).toMatchObject({ status: "failed", maybeDelivered: true });
    expect(failedError(outcome)).toMatchObject({
      failure: "timeout",
      message: "sendMessage: no response within 5000 ms",
    });
  });

  it("a per-call timeoutMs overrides the client's", async () => {
    const clock = new ManualClock();
    const { server, client } = await connect(() => {}, { clock, requestTimeoutMs: 60_000 });
    const edit = client.editMessageText(1, 2, "x", {}, { timeoutMs: 100 });
    await eventually("a request arrived", () => expect(server.requests).toHaveLength(1));
    await clock.advance(100);
    // Edits are idempotent: the timeout is retried.
    await eventually("2 requests arrived", () => expect(server.requests).toHaveLength(2));
    expect(client.outbox.snapshot().counters.retries).toBe(1);
    void edit;
  });

  it("a 5xx is retried for edits and deletes but fails a send as maybe-delivered", async () => {
    let failures = 1;
    const { server, client } = await connect((request, res) => {
      if (request.method === "sendMessage" || failures-- > 0)
        return apiError(res, 502, "Bad Gateway");
      ok(res, true);
    });
    expect(await client.deleteMessage(1, 4)).toMatchObject({ status: "delivered", attempts: 2 });
    const send = await client.sendMessage(1, "x");
    expect(send).toMatchObject({
      status: "failed",
      maybeDelivered: true,
      error: { errorCode: 502 },
    });
    expect(server.methods).toEqual(["deleteMessage", "deleteMessage", "sendMessage"]);
  });
});

describe("TelegramClient: API outcomes", { timeout: 20_000 }, () => {
  it("'message is not modified' is delivered with notModified", async () => {
    const { client } = await connect((_request, res) =>
      apiError(
        res,
        400,
        "Bad Request: message is not modified: specified new message content and reply markup are exactly the same as a current content and reply markup of the message",
      ),
    );
    expect(await client.editMessageText(1, 2, "same")).toEqual({
      status: "delivered",
      result: undefined,
      notModified: true,
      attempts: 1,
    });
  });

  it("403 'bot was blocked' is a ForbiddenError and fails the chat's pending writes too", async () => {
    const { server, client } = await connect((_request, res) => {
      setTimeout(() => apiError(res, 403, "Forbidden: bot was blocked by the user"), 20);
    });
    const first = client.sendMessage(1, "a");
    const second = client.sendMessage(1, "b");
    const outcome = await first;
    const error = failedError(outcome);
    expect(error).toBeInstanceOf(ForbiddenError);
    expect(error).toMatchObject({ code: "ERR_FORBIDDEN", errorCode: 403, isBlockedByUser: true });
    expect(await second).toMatchObject({ status: "failed", error, attempts: 0 });
    expect(server.requests).toHaveLength(1);
  });

  it("migrate_to_chat_id is a ChatMigratedError carrying the new chat id", async () => {
    const { client } = await connect((_request, res) =>
      apiError(res, 400, "Bad Request: group chat was upgraded to a supergroup chat", {
        migrate_to_chat_id: -1001234,
      }),
    );
    const outcome = await client.sendMessage(-5, "x");
    expect(failedError(outcome)).toBeInstanceOf(ChatMigratedError);
    expect(failedError(outcome)).toMatchObject({
      code: "ERR_CHAT_MIGRATED",
      migrateToChatId: -1001234,
    });
  });

  it("a not-modified verdict is an edit's outcome; for a send (a custom classifier) it is a failure", async () => {
    const { client } = await connect(
      (request, res) =>
        apiError(
          res,
          400,
          `Bad Request: ${request.method === "editMessageText" ? "edit" : "send"}`,
        ),
      { outbox: { classifyFailure: () => ({ action: "not-modified" }) } },
    );
    expect(await client.editMessageText(1, 2, "x")).toMatchObject({
      status: "delivered",
      notModified: true,
      result: undefined,
    });
    expect(await client.sendMessage(1, "x")).toMatchObject({
      status: "failed",
      maybeDelivered: true,
      error: { name: "ClientError", code: "ERR_UNEXPECTED_NOT_MODIFIED" },
    });
  });
});
