// BroadcastRegistry: starts broadcasts over one outbox, transport and store, knows which run in
// this process (a second start of a running id is refused), and interrupts them all on close.

import { randomUUID } from "node:crypto";
import { checkOptionalNumber, checkOptions } from "@telepace/core";
import { Broadcast, type BroadcastParts } from "./broadcast.js";
import type { BroadcastSnapshot } from "./broadcast-snapshot.js";
import { BroadcastError } from "./errors.js";
import type { BroadcastReport } from "./events.js";
import {
  type BroadcastRegistryOptions,
  checkBroadcastId,
  resolveRegistryOptions,
  resolveStartOptions,
  type StartBroadcastOptions,
} from "./options.js";
import { RecipientReader } from "./recipients.js";

/** A fresh view of a {@link BroadcastRegistry}. */
export interface BroadcastRegistrySnapshot {
  readonly isClosed: boolean;
  /** Every broadcast running in this process. */
  readonly broadcasts: readonly BroadcastSnapshot[];
}

/** Options of {@link BroadcastRegistry.close}. */
export interface BroadcastCloseOptions {
  /**
   * How long to wait for sends in flight, in ms; then the registry resolves anyway (the outbox's
   * own close decides about them). Range >= 0. @defaultValue 10000
   */
  readonly timeoutMs?: number | undefined;
}

/**
 * Runs broadcasts: one message to many recipients, through the bot's outbox at the lowest
 * priority, its progress in a store so that a restart (or another process) resumes it.
 *
 * @example
 * const broadcasts = new BroadcastRegistry({
 *   outbox: client.outbox,
 *   transport: (method, params, signal) => client.call(method, params, { signal }),
 *   store: new JournalBroadcastStore(journal),
 * });
 * const job = broadcasts.start("news-2026-12", {
 *   message: { method: "sendMessage", params: { text: "Hello!" } },
 *   recipients: userIds,
 * });
 * const report = await job.result;
 */
export class BroadcastRegistry implements AsyncDisposable {
  readonly #parts: BroadcastParts;
  readonly #running = new Map<string, Broadcast>();
  #closed = false;

  /** @throws {TypeError|RangeError} naming the option. */
  constructor(options: BroadcastRegistryOptions) {
    const resolved = resolveRegistryOptions(options);
    this.#parts = { ...resolved, workerId: resolved.workerId ?? randomUUID() };
  }

  /**
   * Starts broadcast `id`, or resumes it where its store says it stopped (a completed or
   * cancelled one ends at once with its report; a paused one waits for `resume()`).
   *
   * @throws {BroadcastError} `ERR_BROADCAST_RUNNING` when `id` runs in this registry already
   *   (`get(id)` returns it), `ERR_BROADCAST_CLOSED` after `close()`.
   * @throws {TypeError|RangeError} naming the option, when one is malformed; a store shared by
   *   several processes with recipients that can be read only once.
   */
  start(id: string, options: StartBroadcastOptions): Broadcast {
    checkBroadcastId(id);
    const resolved = resolveStartOptions(options);
    if (this.#closed) {
      throw new BroadcastError("ERR_BROADCAST_CLOSED", "The broadcast registry is closed");
    }
    if (this.#running.has(id)) {
      throw new BroadcastError(
        "ERR_BROADCAST_RUNNING",
        `Broadcast "${id}" is already running in this process: use get("${id}")`,
      );
    }
    if (this.#parts.store.isShared && !new RecipientReader(resolved.recipients).isRandomAccess) {
      throw new TypeError(
        "Expected `recipients` to be an array or a function (from) => iterable: several processes share this store, and each must read from where its batch starts",
      );
    }
    const broadcast = new Broadcast(id, resolved, this.#parts);
    this.#running.set(id, broadcast);
    void broadcast.result.then(() => {
      if (this.#running.get(id) === broadcast) this.#running.delete(id);
    });
    return broadcast;
  }

  /** The broadcast `id` running in this process, if any. */
  get(id: string): Broadcast | undefined {
    return this.#running.get(id);
  }

  snapshot(): BroadcastRegistrySnapshot {
    return Object.freeze({
      isClosed: this.#closed,
      broadcasts: Object.freeze([...this.#running.values()].map((b) => b.snapshot())),
    });
  }

  /**
   * Interrupts every running broadcast (nothing more is sent; their batches go back to the store
   * for the next start) and waits for their sends in flight, up to `timeoutMs`. Idempotent.
   * @throws {TypeError|RangeError} naming the option.
   */
  async close(options: BroadcastCloseOptions = {}): Promise<readonly BroadcastReport[]> {
    const given = checkOptions("options", options, ["timeoutMs"]);
    const timeoutMs = checkOptionalNumber("timeoutMs", given.timeoutMs, 10_000, { min: 0 });
    this.#closed = true;
    const ending = Promise.all([...this.#running.values()].map((b) => b.interrupt()));
    const done = new AbortController();
    const deadline = this.#parts.clock.sleep(timeoutMs, { signal: done.signal }).then(
      () => undefined,
      () => undefined,
    );
    try {
      return (await Promise.race([ending, deadline])) ?? [];
    } finally {
      done.abort(); // the deadline's timer must not keep the process alive
    }
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.close().then(() => undefined);
  }
}
