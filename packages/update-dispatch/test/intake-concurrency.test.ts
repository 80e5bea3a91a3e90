// The intake's dispatcher runs one update per active person by default (256 slots, not a bare
// dispatcher's 16): a processor that awaits its reply holds its slot while the outbox paces that
// chat, so fewer slots than people writing at once would make the slots, not Telegram, the bound.

import { ManualClock } from "@telepace/core";
import { describe, expect, it } from "vitest";
import { UpdateIntake, type UpdateIntakeOptions, updateDispatcherDefaults } from "../src/index.js";
import { privateMessage } from "./fixtures.js";
import { recorder, settle } from "./harness.js";
import { FakeTelegram, until } from "./intake-harness.js";

/**
 * Runs 300 people's one update each with every processor held until `slots` run, then lets the
 * event loop turn many more times: the most that ever ran at once.
 */
async function mostAtOnce(options: Partial<UpdateIntakeOptions>, slots: number): Promise<number> {
  const clock = new ManualClock();
  const telegram = new FakeTelegram(clock);
  const rec = recorder();
  const gates = Array.from({ length: 300 }, (_, index) => rec.gate(index + 1));
  for (let id = 1; id <= 300; id++) telegram.push(privateMessage(id, id));
  const intake = new UpdateIntake(rec.processor, {
    getUpdates: telegram.getUpdates,
    clock,
    ...options,
  });
  const stop = new AbortController();
  const running = intake.run({ signal: stop.signal });
  await until(() => intake.snapshot().fetched === 300 && rec.running >= slots);
  for (let turn = 0; turn < 50; turn++) await settle();
  const most = rec.maxRunning;
  expect(intake.snapshot().dispatcher.inFlight).toBe(most);
  for (const gate of gates) gate.resolve();
  await until(() => rec.finished.length === 300);
  stop.abort();
  await running;
  await intake.close();
  return most;
}

describe("UpdateIntake's dispatcher slots", () => {
  it("run 256 people at once by default, not a bare dispatcher's 16", async () => {
    expect(updateDispatcherDefaults.maxConcurrency).toBe(16);
    expect(await mostAtOnce({}, 256)).toBe(256);
  });

  it("follow maxActivePrincipals when only that is given", async () => {
    expect(await mostAtOnce({ dispatcher: { maxActivePrincipals: 40 } }, 40)).toBe(40);
  });

  it("are maxConcurrency when given", async () => {
    expect(
      await mostAtOnce({ dispatcher: { maxConcurrency: 8, maxActivePrincipals: 40 } }, 8),
    ).toBe(8);
  });
});
