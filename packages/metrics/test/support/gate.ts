// Ops whose requests stay in flight until a test opens their gate.

import { createDeferred } from "@telepace/core";

/** A gate: `op()` returns an `execute` that waits for `open()`; `opened` counts started calls. */
export function gate() {
  const deferred = createDeferred<void>();
  let started = 0;
  return {
    op(): (signal: AbortSignal) => Promise<string> {
      return async () => {
        started++;
        await deferred.promise;
        return "ok";
      };
    },
    open(): void {
      deferred.resolve();
    },
    get started(): number {
      return started;
    },
  };
}
