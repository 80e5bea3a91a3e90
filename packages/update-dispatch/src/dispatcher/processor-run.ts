// One processor call: a signal of its own, an optional timeout, and an outcome decided exactly
// once, whatever the processor returns, throws or calls back.

import type { Clock, Timer } from "@telepace/core";
import { UpdateDispatchError } from "../errors.js";
import type { Entry } from "./entry.js";
import type { UpdateProcessor } from "./options.js";
import type { ProcessOutcome } from "./results.js";
import type { SignalPool } from "./signal-pool.js";

/** What a run reports to the dispatcher. */
export interface RunHost<P> {
  /** The run's outcome was decided; called once per run. */
  ended(run: ProcessorRun<P>, outcome: ProcessOutcome): void;
  /** A run the dispatcher gave up on (timed out or interrupted) settled after all. */
  settledLate(run: ProcessorRun<P>): void;
}

const RUNNING = 0;
const ENDED = 1;
/** Ended by its timeout or by close while the processor still ran. */
const ABANDONED = 2;
const SETTLED_LATE = 3;

function isObjectLike(value: unknown): value is object {
  return (typeof value === "object" && value !== null) || typeof value === "function";
}

/**
 * Observes a native promise without calling its own `then`: `await` on a promise whose
 * constructor is Promise attaches directly, so a rejection behind a hostile `then` stays handled.
 */
async function observe(promise: Promise<unknown>): Promise<void> {
  try {
    await promise;
  } catch {
    // Its outcome no longer matters: the run already ended as failed.
  }
}

/** `then` of native promises: one of its two callbacks is called, once, and never later. */
const promiseThen: unknown = Promise.prototype.then;

/**
 * A processor call for one entry of one principal (`P`, the dispatcher's principal record). A run
 * that ended without being abandoned, on a native promise or a synchronous result, can be
 * {@link ProcessorRun.assign}ed to the next call: its two callbacks are made once, not per call,
 * and nothing can call them again (a hostile thenable's run is never used again).
 */
export class ProcessorRun<P> {
  /** The entry of the current call (of the last one, once ended). */
  entry: Entry;
  principal: P;
  /** Clock time the processor was called; NaN when nobody listened for timings then. */
  startedAt: number;
  readonly #host: RunHost<P>;
  readonly #signals: SignalPool;
  #controller: AbortController;
  #timer: Timer | undefined;
  #state = RUNNING;
  #isReusable = true;
  readonly #succeeded = (): void => this.#settle("succeeded");
  readonly #failed = (): void => this.#settle("failed");

  constructor(
    entry: Entry,
    principal: P,
    startedAt: number,
    host: RunHost<P>,
    signals: SignalPool,
  ) {
    this.entry = entry;
    this.principal = principal;
    this.startedAt = startedAt;
    this.#host = host;
    this.#signals = signals;
    this.#controller = signals.take();
  }

  /** Whether the run ended for good and nothing it handed out can call it again. */
  get isReusable(): boolean {
    return this.#state === ENDED && this.#isReusable;
  }

  /** Makes an {@link isReusable} run the run of another call, not yet started. */
  assign(entry: Entry, principal: P, startedAt: number): void {
    this.entry = entry;
    this.principal = principal;
    this.startedAt = startedAt;
    this.#controller = this.#signals.take();
    this.#timer = undefined;
    this.#state = RUNNING;
  }

  /**
   * Calls the processor. A synchronous return or throw ends the run before this returns; for a
   * thenable, its `then` is called once (a native promise costs one derived promise), and the
   * timeout starts. Nothing the processor does can throw out of here or reject unhandled.
   */
  start(processor: UpdateProcessor, timeoutMs: number | undefined, clock: Clock): void {
    let result: unknown;
    try {
      result = processor(this.entry.update, this.#controller.signal);
    } catch {
      this.#signals.give(this.#controller);
      this.#end("threw");
      return;
    }
    if (isObjectLike(result)) {
      try {
        // Reading `then` may run a getter, calling it may throw (a native promise's own `then`,
        // or a `constructor` getter that Promise.prototype.then reads): all of that is a failure.
        const then: unknown = (result as { readonly then?: unknown }).then;
        if (typeof then === "function") {
          if (then !== promiseThen) this.#isReusable = false;
          then.call(result, this.#succeeded, this.#failed);
          if (timeoutMs !== undefined && this.#state === RUNNING) {
            this.#timer = clock.setTimer(() => this.#timeOut(timeoutMs), timeoutMs);
          }
          return;
        }
      } catch {
        this.#isReusable = false;
        // The processor's work may still run: its signal is not handed to anybody else.
        if (result instanceof Promise) void observe(result);
        this.#end("failed");
        return;
      }
    }
    this.#signals.give(this.#controller);
    this.#end("succeeded");
  }

  /** Ends a running call as `interrupted` (close gave up); false when it had already ended. */
  interrupt(): boolean {
    if (this.#state !== RUNNING) return false;
    this.#state = ABANDONED;
    this.#timer?.cancel();
    this.#host.ended(this, "interrupted");
    return true;
  }

  /** Aborts the call's signal. */
  abort(reason: UpdateDispatchError): void {
    this.#controller.abort(reason);
  }

  #end(outcome: ProcessOutcome): void {
    if (this.#state !== RUNNING) return;
    this.#state = ENDED;
    this.#timer?.cancel();
    this.#host.ended(this, outcome);
  }

  #settle(outcome: ProcessOutcome): void {
    // A hostile thenable may call back twice, or both callbacks: only the first counts.
    if (this.#state === RUNNING) {
      // Given back before the run ends, so the next call this frees a slot for can take it.
      this.#signals.give(this.#controller);
      this.#end(outcome);
    } else if (this.#state === ABANDONED) {
      this.#state = SETTLED_LATE;
      this.#host.settledLate(this);
    }
  }

  #timeOut(timeoutMs: number): void {
    if (this.#state !== RUNNING) return;
    this.#state = ABANDONED;
    // The signal aborts before the principal goes on, so the processor hears of its timeout
    // before the next update of its principal starts.
    this.#controller.abort(
      new UpdateDispatchError(
        "ERR_UPDATE_TIMEOUT",
        `Processing the update took longer than timeoutMs (${timeoutMs} ms)`,
      ),
    );
    this.#host.ended(this, "timed-out");
  }
}
