// An injected clock and a semaphore: code that takes a `Clock` runs on the system clock in
// production and on a `ManualClock` in tests, where time moves only when the test says so.
// Run: npx tsx clock-and-semaphore.ts (or compile it with tsc and run it with node)
import { type Clock, ManualClock, Semaphore, systemClock } from "@telepace/core";

// Components take a clock; production passes nothing (systemClock), tests pass a ManualClock.
async function pause(clock: Clock = systemClock, signal?: AbortSignal): Promise<number> {
  const startedAt = clock.now();
  await clock.sleep(1_000, { signal });
  return clock.now() - startedAt;
}

const clock = new ManualClock();
const paused = pause(clock);
await clock.advance(1_000); // fires the sleep's timer; no real time passes
console.log(`paused ${await paused} ms on the manual clock`);

const slots = new Semaphore(4);
const permit = await slots.acquire(1, { signal: AbortSignal.timeout(5_000) });
try {
  // … at most 4 of these blocks run at once
  console.log(`${slots.available} of ${slots.capacity} slots free`);
} finally {
  permit.release(); // idempotent; with `using permit = …` the block's end releases it
}
