import { describe, expect, it } from "vitest";
import { RetryAfterTooLongError } from "../src/index.js";
import { decideRetry, type FailedAttempt, type RetryLimits } from "../src/retry-policy.js";

const limits: RetryLimits = {
  maxAttempts: 3,
  maxRetryAfterMs: 60_000,
  retryBaseDelayMs: 1_000,
  retryMaxDelayMs: 5_000,
};
const error = new Error("boom");

function attempt(overrides: Partial<FailedAttempt>): FailedAttempt {
  return {
    verdict: { action: "retry", maybeDelivered: false },
    error,
    attempts: 1,
    isSettled: false,
    isSuperseded: false,
    isSending: true,
    hasChat: true,
    transientFailures: 0,
    ...overrides,
  };
}

describe("decideRetry (pure)", () => {
  it("a transient failure backs the chat off, doubling per failure in a row up to the cap", () => {
    const delays = [0, 1, 2, 3, 4].map(
      (transientFailures) => decideRetry(attempt({ transientFailures }), limits).hold,
    );
    expect(delays).toEqual([
      { kind: "backoff", transientFailures: 1, delayMs: 1_000 },
      { kind: "backoff", transientFailures: 2, delayMs: 2_000 },
      { kind: "backoff", transientFailures: 3, delayMs: 4_000 },
      { kind: "backoff", transientFailures: 4, delayMs: 5_000 },
      { kind: "backoff", transientFailures: 5, delayMs: 5_000 },
    ]);
    expect(decideRetry(attempt({ transientFailures: 1 }), limits).op).toEqual({
      action: "requeue",
      reason: "transient",
      delayMs: 2_000,
    });
  });

  it("a 429 freezes the chat, or every chat for a chat-less op, and requeues", () => {
    const verdict = { action: "rate-limited", retryAfterMs: 3_000 } as const;
    expect(decideRetry(attempt({ verdict }), limits)).toEqual({
      hold: { kind: "freeze", scope: "chat", retryAfterMs: 3_000 },
      op: { action: "requeue", reason: "rate-limited", delayMs: 3_000 },
    });
    expect(decideRetry(attempt({ verdict, hasChat: false }), limits).hold).toEqual({
      kind: "freeze",
      scope: "global",
      retryAfterMs: 3_000,
    });
  });

  it("a 429 longer than the cap fails the op and its chat, or everything for a chat-less op", () => {
    const verdict = { action: "rate-limited", retryAfterMs: 60_001 } as const;
    const chat = decideRetry(attempt({ verdict }), limits).op;
    expect(chat).toMatchObject({ action: "fail", scope: "chat", maybeDelivered: false });
    const tooLong = (chat as { error: RetryAfterTooLongError }).error;
    expect(tooLong).toBeInstanceOf(RetryAfterTooLongError);
    expect(tooLong).toMatchObject({ retryAfterMs: 60_001, maxRetryAfterMs: 60_000, cause: error });
    expect(decideRetry(attempt({ verdict, hasChat: false }), limits).op).toMatchObject({
      action: "fail",
      scope: "all",
    });
    // Exactly the cap is still waited out.
    expect(
      decideRetry(attempt({ verdict: { action: "rate-limited", retryAfterMs: 60_000 } }), limits).op
        .action,
    ).toBe("requeue");
  });

  it("settles instead of requeueing: closed when the outbox stopped sending, then superseded, then out of attempts", () => {
    const transient = { action: "retry", maybeDelivered: true } as const;
    expect(decideRetry(attempt({ isSending: false, isSuperseded: true }), limits).op).toEqual({
      action: "settle",
      outcome: { status: "closed", attempts: 1 },
    });
    expect(decideRetry(attempt({ isSuperseded: true, attempts: 3 }), limits).op).toEqual({
      action: "settle",
      outcome: { status: "superseded", reason: "coalesced", attempts: 3 },
    });
    expect(decideRetry(attempt({ verdict: transient, attempts: 3 }), limits).op).toEqual({
      action: "fail",
      scope: "op",
      error,
      maybeDelivered: true,
    });
    // A 429 that runs out of attempts was never delivered.
    const limited = { action: "rate-limited", retryAfterMs: 10 } as const;
    expect(decideRetry(attempt({ verdict: limited, attempts: 3 }), limits).op).toMatchObject({
      action: "fail",
      maybeDelivered: false,
    });
  });

  it("a 429 over the cap fails the chat even while closing or superseded", () => {
    const verdict = { action: "rate-limited", retryAfterMs: 120_000 } as const;
    expect(
      decideRetry(attempt({ verdict, isSending: false, isSuperseded: true }), limits).op,
    ).toMatchObject({ action: "fail", scope: "chat" });
  });

  it("not modified is delivered and ends the chat's run of transient failures", () => {
    expect(
      decideRetry(attempt({ verdict: { action: "not-modified" }, attempts: 2 }), limits),
    ).toEqual({
      hold: { kind: "reset-failures" },
      op: {
        action: "settle",
        outcome: { status: "delivered", result: undefined, notModified: true, attempts: 2 },
      },
    });
  });

  it("a failure verdict fails the op, and with scope chat every pending op of the chat", () => {
    expect(
      decideRetry(
        attempt({ verdict: { action: "fail", scope: "chat", maybeDelivered: false } }),
        limits,
      ),
    ).toEqual({
      hold: { kind: "none" },
      op: { action: "fail", scope: "chat", error, maybeDelivered: false },
    });
    expect(
      decideRetry(
        attempt({ verdict: { action: "fail", scope: "op", maybeDelivered: true }, attempts: 1 }),
        limits,
      ).op,
    ).toEqual({ action: "fail", scope: "op", error, maybeDelivered: true });
  });

  it("an op aborted in flight still holds its chat, but nothing more happens to it", () => {
    const settled = (verdict: FailedAttempt["verdict"]) =>
      decideRetry(attempt({ verdict, isSettled: true }), limits);
    expect(settled({ action: "rate-limited", retryAfterMs: 500 })).toEqual({
      hold: { kind: "freeze", scope: "chat", retryAfterMs: 500 },
      op: { action: "none" },
    });
    // Even over the cap: the freeze stays, and the chat's other ops fail when they are asked for.
    expect(settled({ action: "rate-limited", retryAfterMs: 120_000 }).op).toEqual({
      action: "none",
    });
    expect(settled({ action: "retry", maybeDelivered: false })).toEqual({
      hold: { kind: "backoff", transientFailures: 1, delayMs: 1_000 },
      op: { action: "none" },
    });
    expect(settled({ action: "not-modified" }).op).toEqual({ action: "none" });
    // A chat that failed for good fails its pending ops all the same.
    expect(settled({ action: "fail", scope: "chat", maybeDelivered: false }).op).toMatchObject({
      action: "fail",
      scope: "chat",
    });
  });

  it("decides without side effects: the same attempt gives equal decisions", () => {
    const input = attempt({ verdict: { action: "retry", maybeDelivered: false } });
    const frozen = Object.freeze({ ...input });
    expect(decideRetry(frozen, limits)).toEqual(decideRetry(frozen, limits));
    expect(frozen).toEqual(input);
  });
});
