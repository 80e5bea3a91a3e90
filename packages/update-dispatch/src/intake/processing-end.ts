// Where the intake learns that an update's processing ended: a wrapper around the processor that
// the dispatcher calls, reading the outcome from the processor's result and its signal.

import { onAbort } from "@telepace/core";
import type { UpdateProcessor } from "../dispatcher/options.js";
import { UpdateDispatchError } from "../errors.js";

function noop(): void {}

function hasCode(reason: unknown, code: string): boolean {
  return reason instanceof UpdateDispatchError && reason.code === code;
}

/**
 * Wraps `processor` so `onEnd(update_id)` is called once when the update's processing ends for
 * good: the processor returned, resolved, rejected or threw, or its timeout elapsed
 * (`ERR_UPDATE_TIMEOUT`: the dispatcher has moved on, whatever the processor still does). An
 * abort by the dispatcher's close (`ERR_DISPATCHER_CLOSED`) is not an end: the update stays
 * unfinished and is replayed. The wrapper keeps the processor's outcome as the dispatcher sees
 * it: a synchronous throw is still synchronous, a rejection still a rejection.
 *
 * @param hasTimeout - whether the dispatcher has a `timeoutMs`; without one, every call shares
 *   one signal that only close aborts, so no listener is added to it.
 */
export function reportingEnds(
  processor: UpdateProcessor,
  hasTimeout: boolean,
  onEnd: (updateId: number) => void,
): UpdateProcessor {
  return (update, signal) => {
    let hasEnded = false;
    const end = (): void => {
      if (hasEnded) return;
      hasEnded = true;
      unsubscribe();
      onEnd(update.update_id);
    };
    const unsubscribe = hasTimeout
      ? onAbort(signal, () => {
          if (hasCode(signal.reason, "ERR_UPDATE_TIMEOUT")) end();
        })
      : noop;
    const settle = (): void => {
      if (hasCode(signal.reason, "ERR_DISPATCHER_CLOSED")) unsubscribe();
      else end();
    };
    let result: unknown;
    try {
      result = processor(update, signal);
    } catch (error) {
      settle();
      throw error;
    }
    return Promise.resolve(result).then(
      (value) => {
        settle();
        return value;
      },
      (error: unknown) => {
        settle();
        throw error;
      },
    );
  };
}
