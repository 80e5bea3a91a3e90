// What the dispatcher holds for one update: the accepted entry, and an `enqueue` call waiting for
// room to become one.

import type { Update } from "@grammyjs/types";
import type { KeyKind, PrincipalId } from "./dispatch-key.js";
import type { EnqueueResult } from "./results.js";

/** One accepted (or waiting) update. */
export interface Entry {
  readonly update: Update;
  /** The update_id when it is a safe integer; other updates are dispatched but not tracked. */
  readonly updateId: number | undefined;
  readonly keyId: PrincipalId;
  readonly keyKind: KeyKind;
  /** Enqueue order: the ready queue serves the oldest first, leftovers keep per-key order. */
  readonly seq: number;
  /** Clock time of `enqueue`; NaN when nobody listened for timings then. */
  readonly enqueuedAt: number;
}

/** An `enqueue(…, { wait: true })` call waiting for capacity. */
export interface Waiter {
  readonly entry: Entry;
  readonly resolve: (result: EnqueueResult) => void;
  unsubscribe: () => void;
}

/** Waiting calls in call order; a Set so that withdrawing one is O(1). */
export type WaiterGroup = Set<Waiter>;
