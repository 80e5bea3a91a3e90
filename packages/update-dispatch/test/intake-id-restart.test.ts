// Update ids that restart lower (Telegram picks the next id at random after a week without
// updates): the intake notices, lets the old numbering finish, has the journal forget the old ids
// and processes every update of the new numbering once, in order, without a tight loop.

import type { Update } from "@grammyjs/types";
import { createDeferred, ManualClock } from "@telepace/core";
import { recordChannels, spyLogger } from "@telepace/testing";
import { describe, expect, it } from "vitest";
import {
  MemoryUpdateJournal,
  UpdateIntake,
  type UpdateIntakeEvent,
  updateIntakeChannels,
} from "../src/index.js";
import { ID_RESTART_QUIET_MS } from "../src/intake/intake-store.js";
import { QUIET_PROBE_MS } from "../src/intake/polling-loop.js";
import { privateMessage } from "./fixtures.js";
import { FakeTelegram, until } from "./intake-harness.js";

const USERS = 10;

/** `count` messages from ids `first`…, from users 1…USERS in turn. */
function messages(first: number, count: number): Update[] {
  return Array.from({ length: count }, (_, i) => privateMessage(first + i, 1 + (i % USERS)));
}

function userOf(update: Update): number {
  return update.message?.from?.id ?? 0;
}

/** A processor that records what it processed, and how often each id. */
function processed() {
  const seen: Update[] = [];
  return {
    seen,
    processor: (update: Update) => void seen.push(update),
    idsOf: (user: number) => seen.filter((u) => userOf(u) === user).map((u) => u.update_id),
  };
}

const RESTARTED =
  "Update ids restarted lower (a new numbering): forgot the old ids, polling goes on";

describe("update ids that restart lower, while polling", () => {
  it("forgets the old ids and processes every new update once, in order, in a bounded number of calls", async () => {
    const clock = new ManualClock();
    const telegram = new FakeTelegram(clock);
    const logger = spyLogger();
    using events = recordChannels<UpdateIntakeEvent>(updateIntakeChannels);
    const { seen, processor, idsOf } = processed();
    const intake = new UpdateIntake(processor, { getUpdates: telegram.getUpdates, clock, logger });
    const stop = new AbortController();
    const running = intake.run({ signal: stop.signal });
    telegram.push(...messages(1000, 400));
    await until(() => seen.length === 400 && telegram.pending === 0);
    await until(() => intake.snapshot().unfinished === 0);
    const callsBefore = telegram.calls.length;

    // A new numbering that starts below every old id: each of its ids was processed before.
    telegram.restartIds();
    telegram.push(...messages(1000, 250));
    await until(() => seen.length === 650, 20_000);
    await until(() => telegram.pending === 0);

    const fresh = seen.slice(400);
    expect(fresh.map((u) => u.update_id).sort((a, b) => a - b)).toEqual(
      messages(1000, 250).map((u) => u.update_id),
    );
    for (let user = 1; user <= USERS; user++) {
      const ids = idsOf(user).slice(-25);
      expect(ids).toEqual([...ids].sort((a, b) => a - b));
    }
    // The long poll that got the head of the new numbering, then one without an offset, two
    // more batches and the next long poll.
    expect(telegram.calls[callsBefore - 1]?.offset).toBe(1400);
    expect(telegram.calls.slice(callsBefore).map((call) => call.offset)).toEqual([
      undefined,
      1100,
      1200,
      1250,
    ]);
    expect(intake.snapshot()).toMatchObject({ idRestarts: 1, appended: 650, duplicates: 0 });
    expect(await intake.journal.highestUpdateId()).toBe(1249);
    expect(logger.calls.filter((call) => call.message === RESTARTED)).toHaveLength(1);
    expect(events.events.filter((e) => e.type === "intake-ids-restarted")).toEqual([
      { type: "intake-ids-restarted", source: "poll", offset: 1400, waitedMs: 0 },
    ]);
    stop.abort();
    await running;
    await intake.close();
  });

  it("lets the old numbering's unfinished updates finish first, storing nothing meanwhile", async () => {
    const clock = new ManualClock();
    const telegram = new FakeTelegram(clock);
    const hung = createDeferred<void>();
    const seen: number[] = [];
    const intake = new UpdateIntake(
      async (update) => {
        if (update.update_id === 5000) await hung.promise;
        seen.push(update.update_id);
      },
      { getUpdates: telegram.getUpdates, clock },
    );
    const stop = new AbortController();
    const running = intake.run({ signal: stop.signal });
    telegram.push(privateMessage(5000, 1), privateMessage(5001, 2));
    await until(() => seen.includes(5001) && telegram.pending === 0);
    telegram.restartIds();
    telegram.push(...messages(10, 5));
    await until(() => intake.snapshot().state === "restarting");
    const calls = telegram.calls.length;
    await clock.advance(60_000); // the wait costs no polls
    expect(telegram.calls.length).toBe(calls);
    expect(intake.snapshot()).toMatchObject({ appended: 2, unfinished: 1, idRestarts: 0 });
    expect(telegram.pending).toBe(5); // not confirmed: Telegram keeps them

    hung.resolve();
    await until(() => seen.length === 7);
    expect(seen.slice(2)).toEqual([10, 11, 12, 13, 14]);
    expect(intake.snapshot()).toMatchObject({ idRestarts: 1, appended: 7, unfinished: 0 });
    stop.abort();
    await running;
    await intake.close();
  });

  it("notices with a probe without an offset when the server answers such an offset with nothing", async () => {
    const clock = new ManualClock();
    const telegram = new FakeTelegram(clock);
    telegram.futureOffset = "empty";
    using events = recordChannels<UpdateIntakeEvent>(updateIntakeChannels);
    const { seen, processor } = processed();
    const intake = new UpdateIntake(processor, {
      getUpdates: telegram.getUpdates,
      clock,
      pollTimeoutSeconds: 30,
    });
    const stop = new AbortController();
    const running = intake.run({ signal: stop.signal });
    telegram.push(...messages(9000, 3));
    await until(() => seen.length === 3 && telegram.pending === 0);
    telegram.restartIds();
    telegram.push(...messages(20, 3));
    const probe = { limit: 1, timeout: 0 };
    await clock.advance(30_000); // one empty long poll: not quiet long enough
    expect(telegram.calls).not.toContainEqual(probe);
    await clock.advance(QUIET_PROBE_MS - 30_000);
    await until(() => seen.length === 6);
    expect(seen.slice(3).map((u) => u.update_id)).toEqual([20, 21, 22]);
    expect(telegram.calls.filter((call) => call.timeout === 0)).toEqual([probe]);
    expect(events.events.filter((e) => e.type === "intake-ids-restarted")).toMatchObject([
      { source: "probe", offset: 9003 },
    ]);
    stop.abort();
    await running;
    await intake.close();
  });

  it("probes at most once a quiet minute, and a probe confirms nothing", async () => {
    const clock = new ManualClock();
    const telegram = new FakeTelegram(clock);
    telegram.futureOffset = "empty";
    const { seen, processor } = processed();
    const intake = new UpdateIntake(processor, { getUpdates: telegram.getUpdates, clock });
    const stop = new AbortController();
    const running = intake.run({ signal: stop.signal });
    telegram.push(...messages(100, 2));
    await until(() => seen.length === 2 && telegram.pending === 0);
    const calls = telegram.calls.length;
    for (let minute = 0; minute < 10; minute++) await clock.advance(60_000);
    const quiet = telegram.calls.slice(calls);
    const probes = quiet.filter((call) => call.offset === undefined);
    expect(probes).toHaveLength(10);
    expect(quiet).toHaveLength(30); // 20 long polls of 30 s, 10 probes
    expect(intake.snapshot()).toMatchObject({ idRestarts: 0, confirmedOffset: 102 });
    stop.abort();
    await running;
    await intake.close();
  });
});

describe("update ids that restart lower, from a webhook", () => {
  async function webhookIntake(first = 1000) {
    const clock = new ManualClock();
    const { seen, processor } = processed();
    const journal = new MemoryUpdateJournal();
    const intake = new UpdateIntake(processor, { clock, journal });
    for (const update of messages(first, 10)) await intake.accept(update);
    await until(() => seen.length === 10 && intake.snapshot().unfinished === 0);
    return { clock, seen, intake, journal };
  }

  it("within a week, an id stored before is a duplicate", async () => {
    const { clock, intake } = await webhookIntake();
    await clock.advance(ID_RESTART_QUIET_MS - 1);
    expect(await intake.accept(privateMessage(1005, 1))).toEqual({ status: "duplicate" });
    expect(intake.snapshot().idRestarts).toBe(0);
    await intake.close();
  });

  it("after a week without updates, an id at or below the highest starts a new numbering", async () => {
    const { clock, seen, intake, journal } = await webhookIntake();
    using events = recordChannels<UpdateIntakeEvent>(updateIntakeChannels);
    await clock.advance(ID_RESTART_QUIET_MS);
    expect(await intake.accept(privateMessage(1005, 1))).toEqual({ status: "stored" });
    expect(await intake.accept(privateMessage(1006, 2))).toEqual({ status: "stored" });
    expect(await intake.accept(privateMessage(1005, 1))).toEqual({ status: "duplicate" });
    await until(() => seen.length === 12);
    expect(await journal.highestUpdateId()).toBe(1006);
    expect(intake.snapshot().idRestarts).toBe(1);
    expect(events.events.filter((e) => e.type === "intake-ids-restarted")).toEqual([
      { type: "intake-ids-restarted", source: "webhook", offset: 1010, waitedMs: 0 },
    ]);
    await intake.close();
  });

  it("far below the highest stored id, a new numbering starts at once", async () => {
    const { intake, journal } = await webhookIntake(200_000);
    expect(await intake.accept(privateMessage(200_009 - 100_000, 1))).toEqual({
      status: "stored",
    });
    expect(intake.snapshot().idRestarts).toBe(0); // within the gap: an old id, stored
    await until(() => intake.snapshot().unfinished === 0);
    expect(await intake.accept(privateMessage(200_009 - 100_001, 1))).toEqual({
      status: "stored",
    });
    expect(await journal.highestUpdateId()).toBe(200_009 - 100_001);
    expect(intake.snapshot().idRestarts).toBe(1);
    await intake.close();
  });

  it("answers busy while the old numbering has unfinished updates", async () => {
    const clock = new ManualClock();
    const hung = createDeferred<void>();
    const seen: number[] = [];
    const intake = new UpdateIntake(
      async (update) => {
        if (update.update_id === 1_000_000) await hung.promise;
        seen.push(update.update_id);
      },
      { clock },
    );
    await intake.accept(privateMessage(1_000_000, 1));
    await clock.advance(ID_RESTART_QUIET_MS);
    expect(await intake.accept(privateMessage(7, 2))).toEqual({ status: "busy" });
    expect(intake.snapshot()).toMatchObject({ busy: 1, idRestarts: 0 });
    hung.resolve();
    await until(() => intake.snapshot().unfinished === 0);
    expect(await intake.accept(privateMessage(7, 2))).toEqual({ status: "stored" });
    await until(() => seen.length === 2);
    expect(intake.snapshot().idRestarts).toBe(1);
    await intake.close();
  });
});
