// The message loop every bot process runs (see process-messages.ts): one run at a time, built
// from the run's configuration and closed at its end, so one process serves run after run.

import type { Update } from "@grammyjs/types";
import type { ProcessMessage } from "./process-messages.js";
import { timeRoundTrip } from "./round-trip.js";

/** One run's bot inside a process. */
export interface HostedRun<S> {
  /** One `getMe` through the run's own client (timed by the host). */
  getMe(): Promise<unknown>;
  /** An update from the bench's webhook delivery (the peers only). */
  handle?(update: Update): void;
  stats(): S;
  /** Stops the run's bot, drops what it still holds and disconnects it. */
  close(): Promise<void>;
}

/** Serves runs built by `start` until the bench says `exit`; says `up` once listening. */
export function serveRuns<C, S>(start: (config: C) => Promise<HostedRun<S>> | HostedRun<S>): void {
  let run: HostedRun<S> | undefined;
  process.on("message", async (message: ProcessMessage<C>) => {
    if (message.type === "run") {
      const started = await start(message.config);
      run = started;
      const roundTripMs = await timeRoundTrip(() => started.getMe());
      process.send?.({ type: "ready", roundTripMs });
    }
    if (message.type === "update") run?.handle?.(message.update);
    if (message.type === "stats" && run !== undefined) {
      process.send?.({ type: "stats", stats: run.stats() });
    }
    if (message.type === "end") {
      await run?.close();
      run = undefined;
      process.send?.({ type: "ended" });
    }
    if (message.type === "exit") process.exit(0);
  });
  process.send?.({ type: "up" });
}
