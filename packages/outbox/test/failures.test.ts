import { describe, expect, it } from "vitest";
import {
  ChatMigratedError,
  ForbiddenError,
  NetworkError,
  Priority,
  TelegramApiError,
} from "../src/index.js";
import { fail } from "./support/ops.js";
import { setup } from "./support/setup.js";

const notModified = new TelegramApiError({
  method: "editMessageText",
  errorCode: 400,
  description:
    "Bad Request: message is not modified: specified new message content and reply markup are exactly the same as a current content and reply markup of the message",
});
const lost = (mayHaveReachedServer: boolean) =>
  new NetworkError("connection lost", {
    method: "sendMessage",
    failure: mayHaveReachedServer ? "connection-lost" : "connect",
    mayHaveReachedServer,
  });
const serverError = new TelegramApiError({
  method: "editMessageText",
  errorCode: 502,
  description: "Bad Gateway",
});

describe("failures", () => {
  it("'message is not modified' is delivered with notModified", async () => {
    const { clock, outbox, rec } = setup();
    const op = outbox.enqueue({
      chatId: 1,
      key: "edit:1",
      execute: rec.scripted("edit", [fail(notModified)]),
    });
    await clock.flush();
    expect(await op).toEqual({
      status: "delivered",
      result: undefined,
      notModified: true,
      attempts: 1,
    });
    expect(outbox.snapshot().counters).toMatchObject({ delivered: 1, notModified: 1, failed: 0 });
  });

  it("transient failures of idempotent ops are retried with a doubling per-chat backoff", async () => {
    const { clock, outbox, rec } = setup({ retryBaseDelayMs: 1_000, retryMaxDelayMs: 3_000 });
    const op = outbox.enqueue({
      chatId: 1,
      key: "edit:1",
      idempotent: true,
      execute: rec.scripted("edit", [fail(serverError), fail(lost(true)), fail(serverError), "ok"]),
    });
    await clock.advance(10_000);
    expect(rec.calls.map((c) => c.startedAt)).toEqual([0, 1_000, 3_000, 6_000]);
    expect(await op).toMatchObject({ status: "delivered", result: "ok", attempts: 4 });
  });

  it("the backoff holds the whole chat, so later ops do not overtake the retried one", async () => {
    const { clock, outbox, rec } = setup({ retryBaseDelayMs: 500 });
    outbox.enqueue({
      chatId: 1,
      idempotent: true,
      key: "d",
      priority: Priority.delete,
      execute: rec.scripted("delete", [fail(serverError), true]),
    });
    await clock.flush();
    outbox.enqueue({
      chatId: 1,
      key: "d2",
      priority: Priority.delete,
      execute: rec.scripted("later"),
    });
    outbox.enqueue({ chatId: 2, execute: rec.scripted("other-chat") });
    await clock.advance(499);
    expect(rec.labels).toEqual(["delete", "other-chat"]);
    await clock.advance(1);
    expect(rec.labels).toEqual(["delete", "other-chat", "delete", "later"]);
  });

  it("a send whose request may have reached Telegram fails as maybe-delivered and is not resent", async () => {
    const { clock, outbox, rec } = setup();
    const error = lost(true);
    const send = outbox.enqueue({ chatId: 1, execute: rec.scripted("send", [fail(error), "dup"]) });
    await clock.advance(60_000);
    expect(await send).toEqual({ status: "failed", error, attempts: 1, maybeDelivered: true });
    expect(rec.calls).toHaveLength(1);
  });

  it("a 5xx on a send is maybe-delivered too", async () => {
    const { clock, outbox, rec } = setup();
    const send = outbox.enqueue({ chatId: 1, execute: rec.scripted("send", [fail(serverError)]) });
    await clock.flush();
    expect(await send).toMatchObject({ status: "failed", maybeDelivered: true });
  });

  it("a send that provably never left (connection refused) is retried", async () => {
    const { clock, outbox, rec } = setup({ retryBaseDelayMs: 100 });
    const send = outbox.enqueue({
      chatId: 1,
      execute: rec.scripted("send", [fail(lost(false)), "sent"]),
    });
    await clock.advance(100);
    expect(await send).toMatchObject({ status: "delivered", result: "sent", attempts: 2 });
  });

  it("an idempotent op out of attempts reports whether the last attempt may have been delivered", async () => {
    const { clock, outbox, rec } = setup({ maxAttempts: 2, retryBaseDelayMs: 10 });
    const op = outbox.enqueue({
      chatId: 1,
      idempotent: true,
      execute: rec.scripted("edit", [fail(lost(true))]),
    });
    await clock.advance(100);
    expect(await op).toMatchObject({ status: "failed", attempts: 2, maybeDelivered: true });
  });

  it("other API errors fail the op at once, without retry", async () => {
    const { clock, outbox, rec } = setup();
    const error = new TelegramApiError({
      method: "editMessageText",
      errorCode: 400,
      description: "Bad Request: message to edit not found",
    });
    const op = outbox.enqueue({
      chatId: 1,
      idempotent: true,
      execute: rec.scripted("edit", [fail(error)]),
    });
    await clock.advance(60_000);
    expect(await op).toEqual({ status: "failed", error, attempts: 1, maybeDelivered: false });
  });

  it("403 and migrate_to_chat_id fail every pending op of the chat with the same typed error", async () => {
    const { clock, outbox, rec } = setup();
    const details = {
      method: "sendMessage",
      errorCode: 403,
      description: "Forbidden: bot was blocked by the user",
    };
    const blocked = new ForbiddenError(details);
    expect(blocked.isBlockedByUser).toBe(true);
    const first = outbox.enqueue({ chatId: 1, execute: rec.manual("first") });
    await clock.flush();
    const second = outbox.enqueue({ chatId: 1, execute: rec.scripted("second") });
    const other = outbox.enqueue({ chatId: 2, execute: rec.scripted("other") });
    rec.last("first").done.reject(blocked);
    expect(await first).toMatchObject({ status: "failed", error: blocked });
    expect(await second).toMatchObject({ status: "failed", error: blocked, attempts: 0 });
    expect((await other).status).toBe("delivered");

    const migrated = new ChatMigratedError(
      {
        method: "sendMessage",
        errorCode: 400,
        description: "Bad Request: group chat was upgraded to a supergroup chat",
        parameters: { migrate_to_chat_id: -1001 },
      },
      -1001,
    );
    const a = outbox.enqueue({ chatId: -5, execute: rec.manual("a") });
    await clock.flush();
    const b = outbox.enqueue({ chatId: -5, execute: rec.scripted("b") });
    rec.last("a").done.reject(migrated);
    expect(await a).toMatchObject({
      status: "failed",
      error: { code: "ERR_CHAT_MIGRATED", migrateToChatId: -1001 },
    });
    expect(await b).toMatchObject({ status: "failed", error: migrated });
    expect(rec.labels).toEqual(["first", "other", "a"]);
  });

  it("a custom classifier decides; one that throws makes the op fail instead of wedging it", async () => {
    const { clock, outbox, rec } = setup({
      classifyFailure: (error) => {
        if (error === "flaky") return { action: "retry", maybeDelivered: false };
        throw new Error("classifier bug");
      },
      retryBaseDelayMs: 10,
    });
    const flaky = outbox.enqueue({
      chatId: 1,
      execute: rec.scripted("flaky", [fail("flaky"), "ok"]),
    });
    const broken = outbox.enqueue({ chatId: 2, execute: rec.scripted("broken", [fail("other")]) });
    await clock.advance(10);
    expect(await flaky).toMatchObject({ status: "delivered", attempts: 2 });
    expect(await broken).toMatchObject({ status: "failed", error: "other" });
  });

  it("a synchronous throw from execute is a failure like any other", async () => {
    const { clock, outbox } = setup();
    const op = outbox.enqueue({
      chatId: 1,
      execute: () => {
        throw new TypeError("bad payload");
      },
    });
    await clock.flush();
    expect(await op).toMatchObject({ status: "failed", error: { message: "bad payload" } });
  });
});
