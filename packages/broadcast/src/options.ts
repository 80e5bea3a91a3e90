// The options of BroadcastRegistry and of each start, their defaults (one frozen object) and
// their checks: a bad value or an unknown key is a TypeError/RangeError naming it.

import {
  type Clock,
  checkBoolean,
  checkClock,
  checkFunction,
  checkLogger,
  checkMethods,
  checkNumber,
  checkObject,
  checkOptionalNumber,
  checkOptions,
  checkSignal,
  describeValue,
  type Logger,
  systemClock,
} from "@telepace/core";
import { Priority, type TelegramOutbox } from "@telepace/outbox";
import { MemoryBroadcastStore } from "./memory-store.js";
import { type BroadcastMessage, type CheckedMessage, checkMessage } from "./message.js";
import { checkRecipients, type RecipientSource } from "./recipients.js";
import type { BroadcastStore } from "./store.js";

/**
 * Performs one attempt of a send: resolves with its result, or throws the outbox's error
 * vocabulary (`RetryAfterError`, `TelegramApiError`, `ForbiddenError`, `ChatMigratedError`,
 * `NetworkError`). `@telepace/client`'s `call` is one:
 * `(method, params, signal) => client.call(method, params, { signal })`.
 */
export type BroadcastTransport = (
  method: string,
  params: Record<string, unknown>,
  signal: AbortSignal,
) => Promise<unknown>;

/** A client that owns an outbox and calls the Bot API: `TelegramClient` of `@telepace/client`. */
export interface BroadcastClient {
  readonly outbox: TelegramOutbox;
  call(
    method: string,
    params: Record<string, unknown>,
    options: { readonly signal: AbortSignal },
  ): Promise<unknown>;
}

/** Options of {@link BroadcastRegistry}. */
export interface BroadcastRegistryOptions {
  /**
   * A `TelegramClient` of `@telepace/client`: its outbox paces the sends (with the bot's
   * replies), its `call` makes each attempt. Give this, or `outbox` and `transport`.
   */
  readonly client?: BroadcastClient | undefined;
  /**
   * The outbox every send goes through (the one the bot's replies use: it paces them together),
   * when there is no `client`.
   */
  readonly outbox?: TelegramOutbox | undefined;
  /** One attempt of a send (see {@link BroadcastTransport}), when there is no `client`. */
  readonly transport?: BroadcastTransport | undefined;
  /**
   * Where progress lives: `JournalBroadcastStore` over the bot's `FileUpdateJournal` on one
   * machine, `RedisBroadcastStore` of `@telepace/redis` across processes.
   * @defaultValue a new {@link MemoryBroadcastStore} (not crash-safe)
   */
  readonly store?: BroadcastStore | undefined;
  /** Names this process among those sharing a store. @defaultValue a random UUID */
  readonly workerId?: string | undefined;
  /** Time for leases, retries, rate and ETA. @defaultValue systemClock */
  readonly clock?: Clock | undefined;
  /** A pino-compatible logger. @defaultValue none (silent) */
  readonly logger?: Logger | undefined;
}

/** Options of {@link BroadcastRegistry.start}. */
export interface StartBroadcastOptions {
  /** What to send (the same to everyone). */
  readonly message: BroadcastMessage;
  /** Who to send it to, in a stable order (see {@link RecipientSource}). */
  readonly recipients: RecipientSource;
  /**
   * Send with `allow_paid_broadcast`, at up to 1000/s (the outbox's `paidBroadcastRps`), on a
   * bot whose owner enabled paid broadcasts: 0.1 Stars per message beyond 30/s. When Telegram
   * refuses (a 429 on a paid send), the broadcast goes on at the free pace and says so.
   * @defaultValue false
   */
  readonly paid?: boolean | undefined;
  /**
   * The number of recipients, for `remaining` and the ETA when the source does not say (an
   * array does). Integer >= 0. @defaultValue unknown until the source ends
   */
  readonly total?: number | undefined;
  /**
   * The outbox priority of the sends: lower runs first. Above every reply, delete and edit the
   * bot makes (0–2), so people who write meanwhile are answered at once. Integer >= 0.
   * @defaultValue 3
   */
  readonly priority?: number | undefined;
  /**
   * Positions per batch: what a process claims at once (with a lease) and what a crash leaves to
   * take over. Fixed when the broadcast is created. Integer 1–10 000. @defaultValue 100
   */
  readonly batchSize?: number | undefined;
  /**
   * Most free sends handed to the outbox per second, spread evenly: set it to the outbox's
   * `globalRps`. Spread sends leave a global slot free every 1/30 s for the bot's replies (they
   * take it first, by priority); 30 at the top of every second would hold a reply for up to a
   * second. Paid sends are not spread: they have a budget of their own. Range > 0.
   * @defaultValue 30
   */
  readonly maxPerSecond?: number | undefined;
  /**
   * Sends of this broadcast in the outbox at once, queued or in flight: two seconds of the free
   * pace, half a second of the paid one, keep the outbox busy without reading far ahead (what is
   * read ahead is held in claimed batches, which another process could otherwise take). Integer >= 1. @defaultValue 60 (free), 500 (paid)
   */
  readonly maxQueued?: number | undefined;
  /**
   * How long a claimed batch stays this process's without a renewal (renewed every third of it):
   * how soon another process takes over the batch of one that died. Range >= 100 ms.
   * @defaultValue 30000
   */
  readonly leaseMs?: number | undefined;
  /**
   * A send that was in flight when a process died may or may not have reached the person: true
   * sends it again (no one is skipped; they may get it twice, counted in `resentAfterCrash`),
   * false records it `maybe-delivered` (no one gets it twice; they may miss it). @defaultValue true
   */
  readonly resendInFlight?: boolean | undefined;
  /**
   * Sends in a row failing for a reason that is not their recipient's (a malformed message, a
   * revoked token) after which the broadcast stops with `ERR_BROADCAST_FAILING`, paused in its
   * store. Integer >= 1. @defaultValue 20
   */
  readonly maxConsecutiveFailures?: number | undefined;
  /** Aborting stops this run as `interrupted` (a later start resumes it). */
  readonly signal?: AbortSignal | undefined;
}

/** Every default of the broadcasts, frozen. */
export const broadcastDefaults = Object.freeze({
  priority: Priority.edit + 1,
  batchSize: 100,
  maxPerSecond: 30,
  maxQueuedFree: 60,
  maxQueuedPaid: 500,
  leaseMs: 30_000,
  resendInFlight: true,
  maxConsecutiveFailures: 20,
  /** Longest wait before asking the store again when every open batch is another's. */
  claimPollMs: 1_000,
  /** Wait before an op the outbox refused as full is offered again. */
  fullRetryMs: 1_000,
  /** First wait after a store failure; doubles up to `storeRetryMaxMs`. */
  storeRetryBaseMs: 250,
  storeRetryMaxMs: 30_000,
});

/** {@link BroadcastRegistryOptions} checked, with defaults. */
export interface ResolvedRegistryOptions {
  readonly outbox: TelegramOutbox;
  readonly transport: BroadcastTransport;
  readonly store: BroadcastStore;
  readonly workerId: string | undefined;
  readonly clock: Clock;
  readonly logger: Logger;
}

/** @throws {TypeError} naming the option. */
export function resolveRegistryOptions(options: unknown): ResolvedRegistryOptions {
  const given = checkOptions("options", checkObject("options", options), [
    "client",
    "outbox",
    "transport",
    "store",
    "workerId",
    "clock",
    "logger",
  ]);
  const client = checkMethods<BroadcastClient>("client", given.client, ["call"]);
  if (client !== undefined && (given.outbox !== undefined || given.transport !== undefined)) {
    throw new TypeError("Expected `client`, or `outbox` and `transport`, not both");
  }
  const outbox = checkMethods<TelegramOutbox>("outbox", client?.outbox ?? given.outbox, [
    "enqueue",
    "snapshot",
  ]);
  if (outbox === undefined) {
    throw new TypeError("Expected `client`, or `outbox` (a TelegramOutbox) and `transport`");
  }
  const transport: BroadcastTransport | undefined =
    client === undefined
      ? given.transport === undefined
        ? undefined
        : checkFunction<BroadcastTransport>("transport", given.transport)
      : (method, params, signal) => client.call(method, params, { signal });
  if (transport === undefined) {
    throw new TypeError("Expected `transport` to be a function, got undefined");
  }
  const store =
    checkMethods<BroadcastStore>("store", given.store, [
      "open",
      "read",
      "claim",
      "renew",
      "markStarted",
      "markUnsent",
      "markSettled",
      "complete",
      "release",
      "setState",
    ]) ?? new MemoryBroadcastStore();
  if (
    given.workerId !== undefined &&
    (typeof given.workerId !== "string" || given.workerId.length === 0)
  ) {
    throw new TypeError(
      `Expected \`workerId\` to be a non-empty string, got ${describeValue(given.workerId)}`,
    );
  }
  return {
    outbox,
    transport,
    store,
    workerId: given.workerId as string | undefined,
    clock: checkClock(given.clock, systemClock),
    logger: checkLogger(given.logger),
  };
}

/** {@link StartBroadcastOptions} checked, with defaults. */
export interface ResolvedStartOptions {
  readonly message: CheckedMessage;
  readonly recipients: RecipientSource;
  readonly paid: boolean;
  readonly total: number | undefined;
  readonly priority: number;
  readonly batchSize: number;
  readonly maxPerSecond: number;
  readonly maxQueued: number;
  readonly leaseMs: number;
  readonly resendInFlight: boolean;
  readonly maxConsecutiveFailures: number;
  readonly signal: AbortSignal | undefined;
}

const START_OPTIONS = [
  "message",
  "recipients",
  "paid",
  "total",
  "priority",
  "batchSize",
  "maxPerSecond",
  "maxQueued",
  "leaseMs",
  "resendInFlight",
  "maxConsecutiveFailures",
  "signal",
] as const;

/** Broadcast ids: short and plain, as they become store keys. */
const ID = /^[A-Za-z0-9_.-]{1,128}$/;

/** @throws {TypeError} when `id` is not 1–128 characters of `A–Z a–z 0–9 _ . -`. */
export function checkBroadcastId(id: unknown): string {
  if (typeof id !== "string" || !ID.test(id)) {
    throw new TypeError(
      `Expected \`id\` to be 1–128 characters of A–Z, a–z, 0–9, "_", "." or "-", got ${describeValue(id)}`,
    );
  }
  return id;
}

/** @throws {TypeError|RangeError} naming the option. */
export function resolveStartOptions(options: unknown): ResolvedStartOptions {
  const given = checkOptions("options", checkObject("options", options), START_OPTIONS);
  const d = broadcastDefaults;
  const paid = checkBoolean("paid", given.paid, false);
  const int = (name: (typeof START_OPTIONS)[number], fallback: number, min: number, max?: number) =>
    checkOptionalNumber(name, given[name], fallback, {
      integer: true,
      min,
      ...(max === undefined ? {} : { max }),
    });
  return {
    message: checkMessage(given.message),
    recipients: checkRecipients(given.recipients),
    paid,
    total:
      given.total === undefined
        ? undefined
        : checkNumber("total", given.total, { integer: true, min: 0 }),
    priority: int("priority", d.priority, 0),
    batchSize: int("batchSize", d.batchSize, 1, 10_000),
    maxPerSecond: checkOptionalNumber("maxPerSecond", given.maxPerSecond, d.maxPerSecond, {
      greaterThan: 0,
    }),
    maxQueued: int("maxQueued", paid ? d.maxQueuedPaid : d.maxQueuedFree, 1),
    leaseMs: checkOptionalNumber("leaseMs", given.leaseMs, d.leaseMs, { min: 100 }),
    resendInFlight: checkBoolean("resendInFlight", given.resendInFlight, d.resendInFlight),
    maxConsecutiveFailures: int("maxConsecutiveFailures", d.maxConsecutiveFailures, 1),
    signal: checkSignal("signal", given.signal),
  };
}
