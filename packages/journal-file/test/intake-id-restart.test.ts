// The intake on a FileUpdateJournal across a restart of the bot, against the Bot API simulator
// over real HTTP: while the bot is down, the update ids restart lower (as Telegram's do after a
// week without updates). The journal's highest id is durable, so the restarted intake must notice
// the new numbering, forget the old ids and process every new update once, in order.

import type { Update } from "@grammyjs/types";
import { type BotApiSim, start } from "@telepace/bot-api-sim";
import { botApiGetUpdates, eventually, privateCrowd } from "@telepace/testing";
import { UpdateIntake } from "@telepace/update-dispatch";
import { afterEach, describe, expect, it } from "vitest";
import { FileUpdateJournal } from "../src/index.js";
import { temporaryDirectory } from "./helpers.js";

let sim: BotApiSim | undefined;
afterEach(async () => {
  await sim?.close({ timeoutMs: 1_000 });
  sim = undefined;
});

describe("an intake on a file journal, restarted after the update ids restarted lower", () => {
  it("processes all 250 new updates once, in order, with a bounded number of polls", async () => {
    sim = await start({ rateLimits: false });
    const own = sim;
    const directory = await temporaryDirectory();
    const crowd = privateCrowd(own, 10);
    const runs = new Map<number, number>();
    const seen: Update[] = [];
    const processor = (update: Update) => {
      seen.push(update);
      runs.set(update.update_id, (runs.get(update.update_id) ?? 0) + 1);
    };
    const getUpdates = botApiGetUpdates<Update>(own.apiRoot, own.token);
    const runIntake = async () => {
      const journal = await FileUpdateJournal.open(directory);
      const intake = new UpdateIntake(processor, { getUpdates, journal, pollTimeoutSeconds: 1 });
      const stop = new AbortController();
      const running = intake.run({ signal: stop.signal });
      return {
        intake,
        journal,
        async stop() {
          stop.abort();
          await running;
          await intake.close();
          await journal.close();
        },
      };
    };

    const first = await runIntake();
    crowd.send(100, "before");
    await eventually("the first 100 are processed", () => expect(seen).toHaveLength(100));
    await first.stop();
    expect(own.pendingUpdates()).toBe(0);
    const firstId = Math.min(...seen.map((update) => update.update_id));

    // While the bot is away the ids restart, far below everything the journal holds.
    own.restartUpdateIds({ nextId: firstId - 200_000 });
    crowd.send(250, "after");
    const pollsBefore = own.counters().calls.getUpdates ?? 0;
    const startedAt = performance.now();
    const second = await runIntake();
    await eventually("the 250 new ones are processed", () => expect(seen).toHaveLength(350), {
      timeoutMs: 15_000,
    });
    const seconds = (performance.now() - startedAt) / 1000;
    await eventually("all confirmed", () => expect(own.pendingUpdates()).toBe(0));

    const fresh = seen.slice(100);
    expect([...runs.values()].every((count) => count === 1)).toBe(true);
    expect(Math.min(...fresh.map((update) => update.update_id))).toBe(firstId - 200_000);
    for (const order of crowd.sequences(fresh)) {
      expect(order).toEqual([...order].sort((a, b) => a - b));
    }
    // The answer that showed the new numbering, three batches, a long poll or two per second.
    const polls = (own.counters().calls.getUpdates ?? 0) - pollsBefore;
    expect(polls).toBeLessThanOrEqual(6 + 2 * Math.ceil(seconds));
    expect(second.intake.snapshot().idRestarts).toBe(1);
    expect(await second.journal.highestUpdateId()).toBe(firstId - 200_000 + 249);
    expect(await second.journal.unfinished()).toEqual([]);
    await second.stop();
  });
});
