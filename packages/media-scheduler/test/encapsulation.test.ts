// Users see registries, transfers, permits and snapshots: no public object leads to a scheduler or
// to any method that moves waiters or charges around.

import { describe, expect, it } from "vitest";
import { type MediaPermit, MediaSchedulerRegistry, type MediaTransfer } from "../src/index.js";
import { UNIT } from "./helpers.js";

/** Names of the scheduler's internal operations: none may be reachable from a public object. */
const INTERNAL = [
  "bind",
  "enqueue",
  "cancel",
  "moveTo",
  "takeWaiters",
  "adoptWaiters",
  "retire",
  "returnCharge",
  "rejectAll",
  "applyLimits",
  "closeWith",
];

/** Every value reachable through own and inherited properties (getters run), depth-first. */
function reachable(root: object, depth = 3): { path: string; value: unknown }[] {
  const found: { path: string; value: unknown }[] = [];
  const seen = new Set<unknown>();
  const visit = (value: unknown, path: string, left: number): void => {
    if (typeof value !== "object" || value === null || seen.has(value)) return;
    seen.add(value);
    for (let proto: object | null = value; proto !== null && proto !== Object.prototype; ) {
      for (const key of Reflect.ownKeys(proto)) {
        if (typeof key !== "string" || key === "constructor") continue;
        const child = (value as Record<string, unknown>)[key];
        found.push({ path: `${path}.${key}`, value: child });
        if (left > 0) visit(child, `${path}.${key}`, left - 1);
      }
      proto = Object.getPrototypeOf(proto) as object | null;
    }
  };
  visit(root, "root", depth);
  return found;
}

describe("public objects", () => {
  it("expose no scheduler and no internal operation", async () => {
    const registry = new MediaSchedulerRegistry({ upload: { maxBytesInFlight: UNIT } });
    const transfer: MediaTransfer = registry.open({ dc: 2, direction: "upload", sizeBytes: 1 });
    const permit: MediaPermit = await transfer.acquire(UNIT);
    expect("scheduler" in transfer).toBe(false);
    expect("scheduler" in registry).toBe(false);
    for (const root of [registry, transfer, permit]) {
      const paths = reachable(root);
      expect(paths.length).toBeGreaterThan(0);
      for (const { path, value } of paths) {
        const name = path.split(".").at(-1) ?? "";
        expect(INTERNAL, `${path} is reachable`).not.toContain(name);
        expect(name, path).not.toBe("scheduler");
        if (typeof value === "object" && value !== null) {
          expect(Object.isFrozen(value) || value === root, `${path} is a live object`).toBe(true);
        }
      }
    }
    permit.release();
  });

  it("keep permits idempotent through their release callback", async () => {
    const registry = new MediaSchedulerRegistry({ upload: { maxBytesInFlight: UNIT } });
    const transfer = registry.open({ dc: 2, direction: "upload", sizeBytes: 1 });
    const permit = await transfer.acquire(UNIT);
    permit.release();
    permit.release();
    await permit[Symbol.asyncDispose]();
    expect(registry.snapshot().counters).toMatchObject({ grants: 1, releases: 1 });
    expect(transfer.schedulerSnapshot().activeBytes).toBe(0);
  });
});
