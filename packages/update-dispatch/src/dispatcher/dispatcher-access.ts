// What the intake may do with the dispatcher it builds, beyond the public API: hear where each run
// ends, hand over an update it has keyed already (without a promise per update), and ask how many
// more a principal takes. Internal: nothing here is exported from the package.

import type { Update } from "@grammyjs/types";
import type { DispatchKey, PrincipalId } from "./dispatch-key.js";
import type { EnqueueResult } from "./results.js";
import type { FinishedHook } from "./run-outcomes.js";

/**
 * Where {@link DispatcherAccess.handOver} put an update:
 * - `accepted` — queued behind its principal's earlier updates;
 * - `duplicate` — its id is queued, waiting or running already;
 * - `closed` — `close()` was called; nothing was taken;
 * - `full` — its principal's queue is full (`maxQueuedPerPrincipal` waiting beside the running
 *   one): nothing was taken, and it does not wait;
 * - `waiting-full` — its principal must wait to become active, and `maxWaitingEnqueues` calls
 *   wait already: nothing was taken;
 * - a promise — it waits to become active (`maxActivePrincipals`), as `enqueue` with `wait: true`.
 */
export type HandOver =
  | "accepted"
  | "duplicate"
  | "closed"
  | "full"
  | "waiting-full"
  | Promise<EnqueueResult>;

/** The intake's way into its own dispatcher. */
export interface DispatcherAccess {
  /**
   * Has the dispatcher call `hook` where each run ends: once per update (with an integer
   * `update_id`) that succeeded, failed, threw or timed out, never for one that `close()`
   * interrupted, which is not done. `hook` must not throw.
   */
  onFinished(hook: FinishedHook): void;
  /**
   * Makes the dispatcher keep no record of update ids (call it before the first update): the
   * intake's journal stores each id once and the intake hands each stored one over once, so the
   * dispatcher's duplicate check and watermark would only repeat it. `duplicate` never comes, and
   * `watermark` stays `undefined`.
   */
  leaveIdsToJournal(): void;
  /** Offers an update with its key, computed by the caller; see {@link HandOver}. */
  handOver(update: Update, key: DispatchKey): HandOver;
  /**
   * How many more updates principal `keyId` takes now without waiting or `full`: its capacity
   * (`maxQueuedPerPrincipal` + 1) less what it holds queued, running or waiting.
   */
  roomFor(keyId: PrincipalId): number;
}

let accessOf: ((dispatcher: object) => DispatcherAccess) | undefined;

/** Called once, by the dispatcher's static block: only the class itself reaches its internals. */
export function grantAccess(grant: (dispatcher: object) => DispatcherAccess): void {
  accessOf = grant;
}

/** The access to `dispatcher`, an `UpdateDispatcher` the caller built. */
export function dispatcherAccess(dispatcher: object): DispatcherAccess {
  if (accessOf === undefined) throw new Error("UpdateDispatcher is not loaded");
  return accessOf(dispatcher);
}
