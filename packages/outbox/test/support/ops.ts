// Test doubles for outbox ops: executes that record when they ran and settle when told to.

import { createDeferred, type Deferred, type ManualClock } from "@telepace/core";
import type { OutboxOperation } from "../../src/index.js";

/** One call of an op's execute. */
export interface Call {
  readonly label: string;
  readonly chat: number | string | undefined;
  readonly startedAt: number;
  readonly signal: AbortSignal;
  endedAt: number | undefined;
  readonly done: Deferred<unknown>;
}

/** Records every execute and lets the test settle it (or settles it by a script). */
export class Recorder {
  readonly calls: Call[] = [];
  constructor(private readonly clock: ManualClock) {}

  /** Labels of calls in start order. */
  get labels(): string[] {
    return this.calls.map((call) => call.label);
  }

  /** The last call with this label. */
  last(label: string): Call {
    const call = this.calls.findLast((c) => c.label === label);
    if (call === undefined) throw new Error(`no call labelled ${label}`);
    return call;
  }

  /** An execute that stays in flight until the test resolves or rejects `last(label).done`. */
  manual(label: string, chat?: number | string): OutboxOperation<unknown>["execute"] {
    return (signal) => {
      const call = this.#start(label, chat, signal);
      return call.done.promise.finally(() => {
        call.endedAt = this.clock.now();
      });
    };
  }

  /**
   * An execute that answers from a script: each call takes the next step (the last repeats).
   * A step is a value to resolve with, or an `Error`/object to throw.
   */
  scripted(
    label: string,
    steps: readonly unknown[] = [label],
    chat?: number | string,
  ): OutboxOperation<unknown>["execute"] {
    let index = 0;
    return (signal) => {
      const step = steps[Math.min(index++, steps.length - 1)];
      const call = this.#start(label, chat, signal);
      call.endedAt = this.clock.now();
      if (step instanceof Thrown) return Promise.reject(step.value);
      return Promise.resolve(step);
    };
  }

  /** Records a call that starts now. */
  #start(label: string, chat: number | string | undefined, signal: AbortSignal): Call {
    const call: Call = {
      label,
      chat,
      startedAt: this.clock.now(),
      signal,
      endedAt: undefined,
      done: createDeferred<unknown>(),
    };
    this.calls.push(call);
    return call;
  }
}

/** Marks a scripted step as a throw. */
export class Thrown {
  constructor(readonly value: unknown) {}
}

/** Shorthand for a scripted throw. */
export const fail = (value: unknown): Thrown => new Thrown(value);
