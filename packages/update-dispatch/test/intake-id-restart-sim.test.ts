// Update ids that restart lower, end to end: the intake long-polls the Bot API simulator over real
// HTTP, the simulator renumbers as Telegram does after a week without updates, and every update of
// the new numbering is processed once, in per-person order, in a bounded number of calls.

import type { Update } from "@grammyjs/types";
import { type BotApiSim, start } from "@telepace/bot-api-sim";
import { botApiGetUpdates, eventually, privateCrowd, spyLogger } from "@telepace/testing";
import { afterEach, describe, expect, it } from "vitest";
import { MemoryUpdateJournal, UpdateIntake } from "../src/index.js";

let sim: BotApiSim | undefined;
afterEach(async () => {
  await sim?.close({ timeoutMs: 1_000 });
  sim = undefined;
});

describe("update ids that restart lower, against the simulator", () => {
  it("memory journal: all 250 new updates processed once, in order, with a bounded number of polls", async () => {
    sim = await start({ rateLimits: false });
    const own = sim;
    const crowd = privateCrowd(own, 10);
    const seen: Update[] = [];
    const logger = spyLogger();
    const intake = new UpdateIntake((update) => void seen.push(update), {
      getUpdates: botApiGetUpdates<Update>(own.apiRoot, own.token),
      journal: new MemoryUpdateJournal(),
      pollTimeoutSeconds: 1,
      logger,
    });
    const stop = new AbortController();
    const running = intake.run({ signal: stop.signal });
    crowd.send(100, "before");
    await eventually("the first 100 are processed and confirmed", () => {
      expect(seen).toHaveLength(100);
      expect(own.pendingUpdates()).toBe(0);
    });
    const firstId = (seen[0] as Update).update_id;
    const pollsBefore = own.counters().calls.getUpdates ?? 0;
    const startedAt = performance.now();

    own.restartUpdateIds({ nextId: firstId - 1_000 });
    crowd.send(250, "after");
    await eventually("the 250 new ones are processed", () => expect(seen).toHaveLength(350));
    const seconds = (performance.now() - startedAt) / 1000;

    const fresh = seen.slice(100);
    expect(new Set(fresh.map((u) => u.update_id)).size).toBe(250);
    expect(Math.min(...fresh.map((u) => u.update_id))).toBe(firstId - 1_000);
    for (const order of crowd.sequences(fresh)) {
      expect(order).toEqual([...order].sort((a, b) => a - b));
    }
    // Three batches of the new numbering, the answer that showed it and a long poll or two per
    // second of the run; the loop this replaces made hundreds a second.
    const polls = (own.counters().calls.getUpdates ?? 0) - pollsBefore;
    expect(polls).toBeLessThanOrEqual(6 + 2 * Math.ceil(seconds));
    expect(intake.snapshot().idRestarts).toBe(1);
    expect(
      logger.calls.filter((call) => call.message.startsWith("Update ids restarted")),
    ).toHaveLength(1);
    expect(logger.text()).not.toContain(own.token);
    stop.abort();
    await running;
    await intake.close();
  });
});
