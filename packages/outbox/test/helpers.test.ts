import { ManualClock } from "@telepace/core";
import { describe, expect, it } from "vitest";
import {
  chatKeyOf,
  classifyFailure,
  NetworkError,
  OutboxError,
  type OutboxOutcome,
  Priority,
  RetryAfterError,
  retryAfterFrom,
  TelegramOutbox,
  unwrapOutcome,
} from "../src/index.js";

describe("retryAfterFrom", () => {
  it("recognises a RetryAfterError, a 429 envelope and a GrammyError-shaped error", () => {
    const own = new RetryAfterError(1_500);
    expect(retryAfterFrom(own)).toBe(own);
    expect(
      retryAfterFrom({
        ok: false,
        error_code: 429,
        description: "Too Many Requests: retry after 4",
        parameters: { retry_after: 4 },
      }),
    ).toMatchObject({
      retryAfterMs: 4_000,
      description: "Too Many Requests: retry after 4",
    });
    const grammy = Object.assign(new Error("Call to 'editMessageText' failed!"), {
      error_code: 429,
      method: "editMessageText",
      parameters: { retry_after: 2 },
    });
    const mapped = retryAfterFrom(grammy);
    expect(mapped).toMatchObject({ retryAfterMs: 2_000, method: "editMessageText" });
    expect(mapped?.cause).toBe(grammy);
  });

  it("uses 5 s for a missing or invalid retry_after, and ignores everything that is not a 429", () => {
    expect(retryAfterFrom({ error_code: 429 })?.retryAfterMs).toBe(5_000);
    expect(retryAfterFrom({ error_code: 429, parameters: { retry_after: -1 } })?.retryAfterMs).toBe(
      5_000,
    );
    expect(
      retryAfterFrom({ error_code: 429, parameters: { retry_after: "3" } })?.retryAfterMs,
    ).toBe(5_000);
    for (const value of [
      undefined,
      null,
      "429",
      429,
      { ok: false, error_code: 400 },
      new Error("x"),
      { ok: true, result: 1 },
    ]) {
      expect(retryAfterFrom(value)).toBeUndefined();
    }
  });
});

describe("classifyFailure", () => {
  const lost = (reached: boolean) =>
    new NetworkError("x", {
      method: "m",
      failure: reached ? "timeout" : "connect",
      mayHaveReachedServer: reached,
    });
  it("maps failures to verdicts by kind and idempotency", () => {
    expect(classifyFailure(new RetryAfterError(10), { idempotent: false })).toEqual({
      action: "rate-limited",
      retryAfterMs: 10,
    });
    expect(classifyFailure(lost(false), { idempotent: false })).toEqual({
      action: "retry",
      maybeDelivered: false,
    });
    expect(classifyFailure(lost(true), { idempotent: true })).toEqual({
      action: "retry",
      maybeDelivered: true,
    });
    expect(classifyFailure(lost(true), { idempotent: false })).toEqual({
      action: "fail",
      scope: "op",
      maybeDelivered: true,
    });
    expect(
      classifyFailure({ error_code: 500, description: "Internal" }, { idempotent: true }),
    ).toEqual({ action: "retry", maybeDelivered: true });
    expect(
      classifyFailure(
        { error_code: 403, description: "Forbidden: bot was kicked" },
        { idempotent: true },
      ),
    ).toEqual({ action: "fail", scope: "chat", maybeDelivered: false });
    expect(
      classifyFailure(
        { error_code: 400, parameters: { migrate_to_chat_id: -100 } },
        { idempotent: true },
      ),
    ).toMatchObject({ scope: "chat" });
    expect(
      classifyFailure(
        { error_code: 400, description: "Bad Request: message is not modified" },
        { idempotent: true },
      ),
    ).toEqual({ action: "not-modified" });
    expect(classifyFailure("weird", { idempotent: true })).toEqual({
      action: "fail",
      scope: "op",
      maybeDelivered: false,
    });
  });
});

describe("unwrapOutcome", () => {
  it("returns a delivered result and throws typed errors for everything else", () => {
    expect(unwrapOutcome({ status: "delivered", result: 5, notModified: false, attempts: 1 })).toBe(
      5,
    );
    expect(
      unwrapOutcome({ status: "delivered", result: undefined, notModified: true, attempts: 1 }),
    ).toBeUndefined();
    const error = new Error("boom");
    expect(() =>
      unwrapOutcome({ status: "failed", error, attempts: 1, maybeDelivered: false }),
    ).toThrow(error);
    const cases: [OutboxOutcome<number>, string][] = [
      [{ status: "superseded", reason: "coalesced", attempts: 0 }, "ERR_SUPERSEDED"],
      [{ status: "closed", attempts: 0 }, "ERR_OUTBOX_CLOSED"],
      [
        { status: "rejected", error: new OutboxError("ERR_OUTBOX_FULL", "full") },
        "ERR_OUTBOX_FULL",
      ],
    ];
    for (const [outcome, code] of cases) {
      expect(() => unwrapOutcome(outcome)).toThrow(expect.objectContaining({ code }));
    }
  });
});

describe("chatKeyOf", () => {
  it("names a chat the same way whether its id is a number or a numeric string", () => {
    expect(chatKeyOf(-1001234567890)).toBe("-1001234567890");
    expect(chatKeyOf("-1001234567890")).toBe("-1001234567890");
    expect(chatKeyOf("007")).toBe("7");
    expect(chatKeyOf("@channel")).toBe("@channel");
  });
});

describe("a foreign transport under the outbox (raw envelopes through retryAfterFrom)", () => {
  it("maps the transport's own 429 responses and errors into the outbox's retry signal", async () => {
    const clock = new ManualClock();
    const outbox = new TelegramOutbox({ clock, privateChatRps: 0 });
    // A stand-in for grammY's `prev(method, payload, signal)`: returns raw API responses.
    const responses: unknown[] = [
      {
        ok: false,
        error_code: 429,
        description: "Too Many Requests: retry after 1",
        parameters: { retry_after: 1 },
      },
      { ok: true, result: { message_id: 3 } },
    ];
    const calls: string[] = [];
    const prev = async (method: string, _payload: unknown, _signal?: AbortSignal) => {
      calls.push(method);
      return responses.shift();
    };
    const transformer = async (
      method: string,
      payload: { chat_id?: number; message_id?: number },
      signal?: AbortSignal,
    ) => {
      const outcome = await outbox.enqueue(
        {
          chatId: payload.chat_id,
          key: method === "editMessageText" ? `edit:${payload.message_id}` : undefined,
          priority: method === "editMessageText" ? Priority.edit : Priority.send,
          idempotent: method === "editMessageText",
          execute: async (opSignal) => {
            const response = await prev(method, payload, opSignal);
            const rateLimited = retryAfterFrom(response);
            if (rateLimited) throw rateLimited;
            return response;
          },
        },
        { signal },
      );
      return unwrapOutcome(outcome);
    };
    const result = transformer("sendMessage", { chat_id: 1 });
    await clock.advance(1_000);
    expect(await result).toEqual({ ok: true, result: { message_id: 3 } });
    expect(calls).toEqual(["sendMessage", "sendMessage"]);
  });
});
