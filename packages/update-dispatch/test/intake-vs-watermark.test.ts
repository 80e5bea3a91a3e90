// The problem the intake solves, measured side by side on the same fake Telegram: update 1 runs
// for 60 s while 999 others (100 other users) arrive at once. The watermark loop confirms only
// finished work and stalls; the intake confirms what it stored and does not.

import type { Update } from "@grammyjs/types";
import { ManualClock } from "@telepace/core";
import { describe, expect, it } from "vitest";
import { UpdateDispatcher, UpdateIntake, type UpdateProcessor } from "../src/index.js";
import { privateMessage } from "./fixtures.js";
import { FakeTelegram, until } from "./intake-harness.js";

function scenario() {
  const clock = new ManualClock();
  const telegram = new FakeTelegram(clock);
  const processed = new Set<number>();
  const processor: UpdateProcessor = async (update) => {
    if (update.update_id === 1) await clock.sleep(60_000);
    processed.add(update.update_id);
  };
  const updates: Update[] = [privateMessage(1, 1)];
  for (let id = 2; id <= 1000; id++) updates.push(privateMessage(id, (id % 100) + 2));
  telegram.push(...updates);
  return { clock, telegram, processed, processor };
}

describe("one slow update: the watermark loop against the intake", () => {
  it("the watermark loop processes 99 of 999 others in the 60 s and fetches each ~9 times", async () => {
    const { clock, telegram, processed, processor } = scenario();
    const dispatcher = new UpdateDispatcher(processor, { clock });
    const stopping = new AbortController();
    let polls = 0;
    const loop = (async () => {
      // The loop of the README's "Without the intake" section.
      let offset = 0;
      while (!stopping.signal.aborted) {
        polls++;
        const updates = await telegram.getUpdates(
          { offset, limit: 100, timeout: 30 },
          { signal: stopping.signal },
        );
        const results = await Promise.all(
          updates.map((u) => dispatcher.enqueue(u, { wait: true, signal: stopping.signal })),
        );
        offset = (dispatcher.watermark ?? offset - 1) + 1;
        if (!results.some((r) => r.status === "accepted")) {
          await dispatcher.drain({ timeoutMs: 1_000, signal: stopping.signal });
        }
      }
    })().catch(() => {});
    await until(() => polls >= 2);
    while (clock.now() < 59_000) await clock.advance(1_000);
    expect(processed.size).toBe(99); // stuck behind update 1 for the whole minute
    expect(polls).toBeGreaterThanOrEqual(60);
    while (processed.size < 1000) await clock.advance(1_000);
    expect(telegram.returned / 1000).toBeGreaterThan(8);
    stopping.abort();
    await loop;
    await dispatcher.close({ timeoutMs: 0 });
  });

  it("the intake processes all 999 at once and fetches each once", async () => {
    const { clock, telegram, processed, processor } = scenario();
    const intake = new UpdateIntake(processor, { getUpdates: telegram.getUpdates, clock });
    const stop = new AbortController();
    const running = intake.run({ signal: stop.signal });
    await until(() => processed.size === 999);
    expect(clock.now()).toBe(0);
    expect(intake.snapshot().polls).toBe(11); // 10 batches, and the long poll now waiting
    await clock.advance(60_000);
    await until(() => processed.size === 1000);
    expect(telegram.returned / 1000).toBe(1);
    stop.abort();
    await running;
    await intake.close();
  });
});
