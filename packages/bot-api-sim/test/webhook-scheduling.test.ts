// The webhook delivery's scheduling on a ManualClock with a receiver the test answers by hand:
// Telegram's retry schedule, Retry-After, the answer timeout, the ramp-up to max_connections,
// expiry, and (fast-check) per-queue order and the connection bound under random answers.

import type { Update } from "@grammyjs/types";
import { ManualClock } from "@telepace/core";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { UpdateQueue } from "../src/world/update-queue.js";
import {
  type WebhookAnswer,
  type WebhookAttempt,
  type WebhookConnection,
  WebhookDelivery,
  type WebhookResponse,
} from "../src/world/webhook-delivery.js";

interface Request {
  readonly update: Update;
  readonly atMs: number;
  answer(answer: WebhookAnswer): void;
}

const ok: WebhookResponse = {
  kind: "response",
  status: 200,
  statusText: "OK",
  retryAfterSeconds: 0,
  contentType: undefined,
  body: Buffer.alloc(0),
  remoteAddress: "127.0.0.1",
};

function status(code: number, retryAfterSeconds = 0): WebhookAnswer {
  return { ...ok, status: code, statusText: "Service Unavailable", retryAfterSeconds };
}

/** A delivery over a queue, with a receiver whose requests wait until the test answers them. */
function harness(options: { maxConnections?: number; retentionMs?: number; timeScale?: number }) {
  const clock = new ManualClock();
  const queue = new UpdateQueue(1, 10_000, options.retentionMs ?? 86_400_000);
  const open: Request[] = [];
  const attempts: WebhookAttempt[] = [];
  const connection: WebhookConnection = {
    post: (json, signal) =>
      new Promise((resolve) => {
        const request: Request = {
          update: JSON.parse(json) as Update,
          atMs: clock.now(),
          answer: (answer) => {
            open.splice(open.indexOf(request), 1);
            resolve(answer);
          },
        };
        open.push(request);
        signal.addEventListener("abort", () => request.answer({ kind: "failure", message: "x" }), {
          once: true,
        });
      }),
    close: () => {},
  };
  const delivery = new WebhookDelivery(queue, {
    clock,
    timeScale: options.timeScale ?? 1,
    unixNow: () => 1_700_000_000 + Math.floor(clock.now() / 1000),
    connect: () => connection,
    reply: () => {},
    report: (attempt) => attempts.push(attempt),
  });
  delivery.start({
    url: new URL("http://127.0.0.1:1/hook"),
    address: "127.0.0.1",
    maxConnections: options.maxConnections ?? 40,
    secretToken: undefined,
  });
  const push = (chatId: number): void => {
    queue.push("message", { message_id: 1, chat: { id: chatId } } as never, clock.now());
    delivery.notify();
  };
  return { clock, queue, open, attempts, delivery, push };
}

describe("webhook scheduling", () => {
  it("retries a failed update at once, then after 2, 4, 8… s up to 60 s, and confirms it on a 2xx", async () => {
    const { clock, queue, open, attempts, delivery, push } = harness({});
    push(1);
    const times: number[] = [];
    for (let failure = 0; failure < 9; failure++) {
      // With no request open, the only timer is the retry's.
      if (open.length === 0) await clock.advanceTo(clock.nextTimerAt() as number);
      expect(open).toHaveLength(1);
      times.push((open[0] as Request).atMs);
      (open[0] as Request).answer(status(500));
      await clock.flush();
    }
    expect(times).toEqual([0, 0, 2_000, 6_000, 14_000, 30_000, 62_000, 122_000, 182_000]);
    expect(delivery.lastError).toEqual({
      date: 1_700_000_182,
      message: "Wrong response from the webhook: 500 Service Unavailable",
    });
    expect(queue.pending(clock.now())).toBe(1);
    await clock.advance(60_000);
    (open[0] as Request).answer(ok);
    await clock.flush();
    expect(queue.pending(clock.now())).toBe(0);
    expect(attempts.map((a) => a.outcome)).toEqual([...Array(9).fill("failed"), "confirmed"]);
    expect(attempts.at(-1)).toMatchObject({ failures: 9, status: 200 });
  });

  it("waits the webhook's Retry-After (up to an hour) before the next try", async () => {
    const { clock, open, push } = harness({});
    push(1);
    // [Retry-After in s, the wait it gives in ms]: an hour at most.
    for (const [retryAfter, waitMs] of [
      [7, 7_000],
      [100_000, 3_600_000],
    ] as const) {
      (open[0] as Request).answer(status(503, retryAfter));
      await clock.flush();
      await clock.advance(waitMs - 1);
      expect(open).toHaveLength(0);
      await clock.advance(1);
      expect(open).toHaveLength(1);
    }
  });

  it("gives an answer 60 s (Telegram time), then retries: Read timeout expired", async () => {
    const { clock, open, delivery, push } = harness({ timeScale: 10 });
    push(1);
    await clock.flush();
    await clock.advance(5_999);
    expect(open).toHaveLength(1);
    await clock.advance(1);
    await clock.flush();
    // The retry after the first failure goes out at once.
    expect(open).toHaveLength(1);
    expect(delivery.lastError?.message).toBe("Read timeout expired");
  });

  it("holds a chat's later updates behind its failing one while other chats go on", async () => {
    const { clock, open, push } = harness({});
    push(1);
    await clock.flush();
    (open[0] as Request).answer(ok); // warm: up to max_connections from now on
    await clock.flush();
    push(1);
    push(1);
    push(2);
    await clock.flush();
    expect(open.map((r) => r.update.message?.chat.id)).toEqual([1, 2]);
    const [first, other] = open as [Request, Request];
    first.answer(status(500));
    other.answer(ok);
    await clock.flush();
    // Chat 1 retries the same update; its next one has not been sent.
    expect(open.map((r) => r.update.update_id)).toEqual([first.update.update_id]);
  });

  it("opens one connection until the webhook answered a 2xx in the last 10 s", async () => {
    const { clock, open, push } = harness({ maxConnections: 3 });
    for (const chat of [1, 2, 3, 4, 5]) push(chat);
    await clock.flush();
    expect(open).toHaveLength(1);
    (open[0] as Request).answer(ok);
    await clock.flush();
    expect(open).toHaveLength(3);
    for (const request of [...open]) request.answer(status(500));
    await clock.flush();
    // First failures are retried at once, still up to three at a time.
    expect(open).toHaveLength(3);
    await clock.advance(10_001);
    for (const request of [...open]) request.answer(status(500));
    await clock.flush();
    expect(open).toHaveLength(1);
    await clock.advance(2_000); // the second failures' retries are due, but one at a time
    expect(open).toHaveLength(1);
  });

  it("gives an update up when it would expire before its next try", async () => {
    const { clock, queue, open, attempts, push } = harness({ retentionMs: 5_000 });
    push(1);
    push(1);
    await clock.flush();
    (open[0] as Request).answer(status(500));
    await clock.flush();
    (open[0] as Request).answer(status(500)); // next try in 2 s
    await clock.flush();
    await clock.advance(2_000);
    (open[0] as Request).answer(status(500)); // next try in 4 s: past the 5 s retention
    await clock.flush();
    expect(attempts.at(-1)).toMatchObject({ outcome: "dropped" });
    expect(queue.pending(clock.now())).toBe(1);
    // The chat's next update goes out right away.
    expect(open.map((r) => r.update.update_id)).toEqual([2]);
  });

  it("stop() abandons requests in flight and leaves their updates pending", async () => {
    const { clock, queue, open, delivery, push } = harness({});
    push(1);
    await clock.flush();
    expect(delivery.inFlight).toBe(1);
    delivery.stop();
    await clock.flush();
    expect(open).toHaveLength(0);
    expect(delivery.inFlight).toBe(0);
    expect(queue.pending(clock.now())).toBe(1);
    expect(clock.pendingTimers).toBe(0);
  });
});

type Step =
  | { readonly kind: "push"; readonly chat: number }
  | { readonly kind: "answer"; readonly pick: number; readonly with: "ok" | "500" | "503" | "gone" }
  | { readonly kind: "advance"; readonly ms: number };

const stepArb: fc.Arbitrary<Step> = fc.oneof(
  fc.record({ kind: fc.constant("push" as const), chat: fc.integer({ min: 1, max: 6 }) }),
  fc.record({
    kind: fc.constant("answer" as const),
    pick: fc.nat(),
    with: fc.constantFrom(
      "ok" as const,
      "ok" as const,
      "500" as const,
      "503" as const,
      "gone" as const,
    ),
  }),
  fc.record({ kind: fc.constant("advance" as const), ms: fc.integer({ min: 0, max: 5_000 }) }),
);

describe("webhook scheduling, randomised", () => {
  it("keeps per-chat order, one request per chat, at most max_connections, and loses nothing", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 4 }),
        fc.array(stepArb, { minLength: 1, maxLength: 60 }),
        async (maxConnections, steps) => {
          const h = harness({ maxConnections });
          const pushed = new Map<number, number[]>();
          const confirmed = new Map<number, number[]>();
          let nextId = 1;
          const check = (): void => {
            expect(h.open.length).toBeLessThanOrEqual(maxConnections);
            const chats = h.open.map((r) => r.update.message?.chat.id);
            expect(new Set(chats).size).toBe(chats.length);
            for (const request of h.open) {
              const chat = request.update.message?.chat.id as number;
              const done = confirmed.get(chat) ?? [];
              // The request is the chat's oldest update not confirmed yet.
              expect(request.update.update_id).toBe((pushed.get(chat) ?? [])[done.length]);
            }
          };
          const answer = (request: Request, result: WebhookAnswer): void => {
            if (result === ok) {
              const chat = request.update.message?.chat.id as number;
              confirmed.set(chat, [...(confirmed.get(chat) ?? []), request.update.update_id]);
            }
            request.answer(result);
          };
          for (const step of steps) {
            if (step.kind === "push") {
              pushed.set(step.chat, [...(pushed.get(step.chat) ?? []), nextId++]);
              h.push(step.chat);
            } else if (step.kind === "advance") {
              await h.clock.advance(step.ms);
            } else if (h.open.length > 0) {
              const request = h.open[step.pick % h.open.length] as Request;
              const results = {
                ok,
                "500": status(500),
                "503": status(503, 1),
                gone: { kind: "failure", message: "Connection refused" } as const,
              };
              answer(request, results[step.with]);
            }
            await h.clock.flush();
            check();
          }
          // Then the receiver recovers: everything arrives, once, in order.
          for (let round = 0; round < 500 && h.queue.pending(h.clock.now()) > 0; round++) {
            for (const request of [...h.open]) answer(request, ok);
            await h.clock.flush();
            check();
            if (h.open.length === 0)
              await h.clock.advanceTo(h.clock.nextTimerAt() ?? h.clock.now());
          }
          expect(h.queue.pending(h.clock.now())).toBe(0);
          expect(confirmed).toEqual(pushed);
          h.delivery.stop();
        },
      ),
      { numRuns: 150 },
    );
  });
});
