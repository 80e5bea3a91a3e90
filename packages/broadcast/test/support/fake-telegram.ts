// A stand-in for the Bot API behind a broadcast's transport, on a ManualClock: each chat answers
// as the test says (delivered, blocked, deactivated, kicked, missing, migrated, a 5xx, a 429 once),
// every delivery is counted per chat, and paid sends are refused unless paid broadcasts are on.

import type { ManualClock } from "@telepace/core";
import {
  type ChatId,
  ChatMigratedError,
  ForbiddenError,
  RetryAfterError,
  TelegramApiError,
  TelegramOutbox,
  type TelegramOutboxOptions,
} from "@telepace/outbox";
import type { BroadcastTransport } from "../../src/index.js";

/** How a chat answers a send. */
export type ChatBehaviour =
  | "ok"
  | "blocked"
  | "deactivated"
  | "kicked"
  | "missing"
  | "bad-gateway"
  | "rate-limited-once"
  | "bad-request"
  | { readonly migrateTo: number };

export interface FakeTelegramOptions {
  readonly clock: ManualClock;
  /** Clock ms each request takes. @defaultValue 5 */
  readonly latencyMs?: number;
  readonly behaviour?: (chatId: ChatId) => ChatBehaviour;
  /** Whether paid sends are accepted (else a 429 of `refusalMs`). @defaultValue true */
  readonly paidBroadcasts?: boolean;
  readonly refusalMs?: number;
  /** Deliveries per chat, shared with other instances (the same Telegram, another process). */
  readonly delivered?: Map<string, number>;
}

/** What the fake saw and did. */
export class FakeTelegram {
  /** Deliveries per chat (a message that reached the person). */
  readonly delivered: Map<string, number>;
  /** Deliveries made through this instance. */
  deliveries = 0;
  /** Requests started, per chat. */
  readonly requests = new Map<string, number>();
  /** Payloads of every request, in start order. */
  readonly payloads: Record<string, unknown>[] = [];
  paidRefusals = 0;
  readonly #options: FakeTelegramOptions;
  readonly #limitedOnce = new Set<string>();
  /** Requests in flight, by chat. */
  readonly #flying = new Set<string>();
  #dead = false;

  constructor(options: FakeTelegramOptions) {
    this.#options = options;
    this.delivered = options.delivered ?? new Map();
  }

  /** Requests in flight now. */
  get inFlight(): number {
    return this.#flying.size;
  }

  readonly transport: BroadcastTransport = async (method, params, signal) => {
    if (this.#dead) return new Promise<never>(() => {});
    const chat = String(params.chat_id);
    this.payloads.push(params);
    this.requests.set(chat, (this.requests.get(chat) ?? 0) + 1);
    const flight = `${chat}#${this.payloads.length}`;
    this.#flying.add(flight);
    try {
      await this.#options.clock.sleep(this.#options.latencyMs ?? 5, { signal });
      signal.throwIfAborted();
      if (this.#dead) return await new Promise<never>(() => {});
      return this.#answer(method, chat, params);
    } finally {
      this.#flying.delete(flight);
    }
  };

  /**
   * The process dies: nothing it sends from now on arrives, and no answer comes back. Each
   * request in flight reached Telegram or not, as `reached(chat)` says. Returns their chats.
   */
  crash(reached: (chat: string) => boolean): string[] {
    this.#dead = true;
    const chats = [...this.#flying].map((flight) => flight.slice(0, flight.indexOf("#")));
    for (const chat of chats) if (reached(chat)) this.#deliver(chat);
    return chats;
  }

  /** Chats that got the message more than once. */
  duplicates(): string[] {
    return [...this.delivered].filter(([, count]) => count > 1).map(([chat]) => chat);
  }

  #answer(method: string, chat: string, params: Record<string, unknown>): unknown {
    const details = (errorCode: number, description: string) => ({
      method,
      errorCode,
      description,
    });
    if (params.allow_paid_broadcast === true && this.#options.paidBroadcasts === false) {
      this.paidRefusals++;
      throw new RetryAfterError(this.#options.refusalMs ?? 1_000, { method });
    }
    const behaviour = this.#options.behaviour?.(params.chat_id as ChatId) ?? "ok";
    switch (behaviour) {
      case "blocked":
        throw new ForbiddenError(details(403, "Forbidden: bot was blocked by the user"));
      case "deactivated":
        throw new ForbiddenError(details(403, "Forbidden: user is deactivated"));
      case "kicked":
        throw new ForbiddenError(details(403, "Forbidden: bot was kicked from the group chat"));
      case "missing":
        throw new TelegramApiError(details(400, "Bad Request: chat not found"));
      case "bad-request":
        throw new TelegramApiError(details(400, "Bad Request: message text is empty"));
      case "bad-gateway":
        this.#deliver(chat); // stored, but the answer says otherwise
        throw new TelegramApiError(details(502, "Bad Gateway"));
      case "rate-limited-once":
        if (!this.#limitedOnce.has(chat)) {
          this.#limitedOnce.add(chat);
          throw new RetryAfterError(2_000, { method });
        }
        break;
      case "ok":
        break;
      default:
        throw new ChatMigratedError(
          details(400, "Bad Request: group chat was upgraded to a supergroup chat"),
          behaviour.migrateTo,
        );
    }
    this.#deliver(chat);
    return { message_id: 1, chat: { id: params.chat_id } };
  }

  #deliver(chat: string): void {
    this.deliveries++;
    this.delivered.set(chat, (this.delivered.get(chat) ?? 0) + 1);
  }
}

/** An outbox on the clock with Telegram's pace (no margin, so seconds are whole). */
export function testOutbox(
  clock: ManualClock,
  options: TelegramOutboxOptions = {},
): TelegramOutbox {
  return new TelegramOutbox({ clock, pacingMarginMs: 0, maxInFlight: 64, ...options });
}

/** Advances the clock in steps until `promise` settles (or `maxMs` of clock time passed). */
export async function runUntil<T>(
  clock: ManualClock,
  promise: Promise<T>,
  { stepMs = 10, maxMs = 600_000 }: { stepMs?: number; maxMs?: number } = {},
): Promise<T> {
  let settled = false;
  void promise.then(
    () => {
      settled = true;
    },
    () => {
      settled = true;
    },
  );
  const deadline = clock.now() + maxMs;
  while (!settled) {
    if (clock.now() >= deadline) throw new Error(`not settled within ${maxMs} ms of clock time`);
    await clock.advance(stepMs);
  }
  return promise;
}

/** Chat ids 1…n. */
export function users(count: number, first = 1): number[] {
  return Array.from({ length: count }, (_, index) => first + index);
}
