// Placeholder entry until the reference bot lands: shows the core primitives at work.
import { Semaphore, systemClock } from "@telepace/core";

const slots = new Semaphore(2);
const started = systemClock.now();
await Promise.all(
  [1, 2, 3, 4].map(async (job) => {
    using _permit = await slots.acquire();
    await systemClock.sleep(50);
    console.log(`job ${job} done at +${Math.round(systemClock.now() - started)} ms`);
  }),
);
