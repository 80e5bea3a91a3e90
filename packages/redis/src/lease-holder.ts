// What the lease holders of this package (the elected poller, the workers and the job registry)
// are given — a name in their leases, how long a lease lasts, a clock and a logger — checked the
// same way for all.

import {
  type Clock,
  checkClock,
  checkLogger,
  checkNumber,
  type Logger,
  systemClock,
} from "@telepace/core";

/** The options `SharedPoller` and `SharedUpdateWorker` share. */
export interface LeaseHolderOptions {
  /**
   * Time source for renewals, heartbeats and waits; the leases themselves expire on Redis's time.
   * @defaultValue systemClock
   */
  readonly clock?: Clock | undefined;
  /** pino-compatible; fixed messages only, never an update or an error message. @defaultValue none */
  readonly logger?: Logger | undefined;
}

/** A lease holder's options after defaults and validation. */
export interface ResolvedLeaseHolder {
  /** The name in its leases: the given `pollerId` / `workerId` / `ownerId`, or `<pid>-<random>`. */
  readonly id: string;
  readonly leaseMs: number;
  readonly clock: Clock;
  readonly logger: Logger;
}

/** The keys {@link resolveLeaseHolder} reads besides the id. */
export const LEASE_HOLDER_OPTION_NAMES: readonly string[] = Object.freeze([
  "leaseMs",
  "clock",
  "logger",
]);

/**
 * Reads the id option `idName`, `leaseMs` (>= 100, `defaultLeaseMs` when absent), `clock` and
 * `logger` of options whose keys were checked.
 *
 * @throws {TypeError | RangeError} naming the option.
 */
export function resolveLeaseHolder(
  given: Readonly<Record<string, unknown>>,
  idName: "pollerId" | "workerId" | "ownerId",
  defaultLeaseMs: number,
): ResolvedLeaseHolder {
  const id = given[idName];
  if (id !== undefined && (typeof id !== "string" || id === "")) {
    throw new TypeError(`Expected \`${idName}\` to be a non-empty string`);
  }
  return {
    id: (id as string | undefined) ?? `${process.pid}-${Math.random().toString(36).slice(2, 10)}`,
    leaseMs:
      given.leaseMs === undefined
        ? defaultLeaseMs
        : checkNumber("leaseMs", given.leaseMs, { min: 100 }),
    clock: checkClock(given.clock, systemClock),
    logger: checkLogger(given.logger),
  };
}
