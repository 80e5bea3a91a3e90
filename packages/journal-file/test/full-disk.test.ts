// A disk that fills, as it does in the field: a small tmpfs in a private mount namespace. Appends
// reject with the I/O error while it is full; once space is freed the journal writes again by
// itself, and a reopen finds exactly what was acknowledged. End to end, an UpdateIntake on the
// file journal polls the sim (and takes a webhook's deliveries) across the outage: no update lost,
// none processed twice, no restart. Needs root (unshare and mount).

import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import type { Update } from "@grammyjs/types";
import { type BotApiSim, start } from "@telepace/bot-api-sim";
import { ManualClock } from "@telepace/core";
import { eventually } from "@telepace/testing";
import { type GetUpdates, UpdateIntake } from "@telepace/update-dispatch";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { FileUpdateJournal } from "../src/index.js";
import { idsOf, journalRejection, updates } from "./helpers.js";
import { mountSmallDisk, type SmallDisk, smallDiskUnavailable } from "./small-disk.js";

const unavailable = smallDiskUnavailable();
if (unavailable !== undefined) console.warn(`Skipping the full-disk tests: ${unavailable}.`);

/** Larger than a page, so that storing it needs space a full disk does not have. */
const bigText = (id: number) => `update ${id} `.repeat(400);
const big = (...ids: number[]): Update[] =>
  updates(...ids).map(
    (update) =>
      ({ ...update, message: { ...update.message, text: bigText(update.update_id) } }) as Update,
  );

/** getUpdates over real HTTP, failing the way the intake reads failures (`error_code`). */
function getUpdatesOf(sim: BotApiSim): GetUpdates {
  return async (params, { signal }) => {
    const response = await fetch(`${sim.apiRoot}/bot${sim.token}/getUpdates`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(params),
      signal,
    });
    const body = (await response.json()) as { ok: boolean; result?: Update[]; error_code?: number };
    if (!body.ok)
      throw Object.assign(new Error("getUpdates failed"), { error_code: body.error_code });
    return body.result ?? [];
  };
}

/** A user of the sim who sends `count` long messages at a time (each over a page once stored). */
function chatter(sim: BotApiSim): (count: number) => void {
  const alice = sim.users.create({ firstName: "Alice" });
  const chat = sim.chats.createPrivate(alice);
  return (count) => {
    for (let index = 0; index < count; index++) {
      sim.sendText(alice, chat, bigText(index).slice(0, 4000));
    }
  };
}

/** What the bot processed: how often each update id ran. */
function processedLog(): {
  runs: Map<number, number>;
  processor: (update: Update) => Promise<void>;
} {
  const runs = new Map<number, number>();
  return {
    runs,
    processor: async (update) => {
      runs.set(update.update_id, (runs.get(update.update_id) ?? 0) + 1);
    },
  };
}

let disk: SmallDisk | undefined;
let sim: BotApiSim | undefined;

beforeEach(async () => {
  if (unavailable !== undefined) return;
  disk = await mountSmallDisk(1024 * 1024);
});

afterEach(async () => {
  await sim?.close();
  sim = undefined;
  await disk?.close();
  disk = undefined;
});

const smallDisk = (): SmallDisk => {
  if (disk === undefined) throw new Error("no small disk mounted");
  return disk;
};

describe.skipIf(unavailable !== undefined)("a full disk", () => {
  it("rejects appends with the I/O error, and the journal writes again by itself once space is freed", async () => {
    const directory = join(smallDisk().path, "journal");
    const clock = new ManualClock();
    const journal = await FileUpdateJournal.open(directory, { clock });
    await journal.append(big(1, 2, 3));
    await journal.finish(1);
    expect(await smallDisk().fill()).toBeGreaterThan(0);

    const error = await journalRejection(journal.append(big(4, 5)));
    expect(error).toMatchObject({ code: "ERR_JOURNAL_IO", cause: { code: "ENOSPC" } });
    // Tried again (at once, then after the back-off): the disk is still full.
    for (const wait of [0, 250]) {
      await clock.advance(wait);
      const again = await journalRejection(journal.append(big(4, 5)));
      expect(again).toMatchObject({
        code: "ERR_JOURNAL_FAILED",
        cause: { cause: { code: "ENOSPC" } },
      });
    }
    expect(journal.snapshot()).toMatchObject({ isFailed: true, failures: 3, recoveries: 0 });
    expect(idsOf(await journal.unfinished())).toEqual([2, 3]);

    await smallDisk().free();
    await clock.advance(500);
    expect(idsOf((await journal.append(big(4, 5))).appended)).toEqual([4, 5]);
    expect(journal.snapshot()).toMatchObject({ isFailed: false, failures: 3, recoveries: 1 });
    await journal.finish(2);
    await journal.close();

    const after = await FileUpdateJournal.open(directory);
    expect(await after.unfinished()).toEqual(big(3, 4, 5));
    expect(await after.highestUpdateId()).toBe(5);
    await after.close();
  });

  it("keeps an intake polling the sim through the outage: nothing lost, nothing run twice, no restart", async () => {
    sim = await start({ rateLimits: false });
    const directory = join(smallDisk().path, "journal");
    const journal = await FileUpdateJournal.open(directory);
    const { runs, processor } = processedLog();
    const intake = new UpdateIntake(processor, {
      getUpdates: getUpdatesOf(sim),
      journal,
      pollTimeoutSeconds: 1,
    });
    let stopped: unknown;
    const running = intake.run().catch((error: unknown) => {
      stopped = error;
    });
    const send = chatter(sim);
    send(5);
    await eventually("the first five processed", () => runs.size === 5);

    await smallDisk().fill();
    send(5);
    await eventually("two failed appends", () => journal.snapshot().failures >= 2, {
      timeoutMs: 15_000,
    });
    expect(runs.size).toBe(5); // stored first: nothing runs that the journal does not hold
    expect(intake.snapshot().backoffs).toBeGreaterThanOrEqual(1);

    await smallDisk().free();
    await eventually("all ten processed", () => runs.size === 10, { timeoutMs: 20_000 });
    await eventually("confirmed to Telegram", () => sim?.pendingUpdates() === 0, {
      timeoutMs: 10_000,
    });
    expect([...runs.values()].every((count) => count === 1)).toBe(true);
    expect(journal.snapshot()).toMatchObject({ isFailed: false, recoveries: 1 });
    expect(stopped).toBeUndefined();

    await intake.close({ timeoutMs: 5_000 });
    await running;
    const highest = Math.max(...runs.keys());
    await journal.close();
    const after = await FileUpdateJournal.open(directory);
    expect(await after.unfinished()).toEqual([]);
    expect(await after.highestUpdateId()).toBe(highest);
    await after.close();
  }, 60_000);

  it("keeps a webhook intake storing Telegram's retried deliveries through the outage", async () => {
    sim = await start({ rateLimits: false });
    const directory = join(smallDisk().path, "journal");
    const journal = await FileUpdateJournal.open(directory);
    const { runs, processor } = processedLog();
    const intake = new UpdateIntake(processor, { journal });
    const answers: number[] = [];
    const server = await listen(intake, answers);
    const delivering = new AbortController();
    const delivered = deliverAsTelegramDoes(sim, server, delivering.signal);
    try {
      const send = chatter(sim);
      send(3);
      await eventually("the first three processed", () => runs.size === 3);
      await smallDisk().fill();
      send(3);
      await eventually(
        "deliveries refused",
        () => answers.filter((status) => status === 500).length >= 2,
        { timeoutMs: 15_000 },
      );
      expect(runs.size).toBe(3);
      await smallDisk().free();
      await eventually("all six processed", () => runs.size === 6, { timeoutMs: 20_000 });
      expect([...runs.values()].every((count) => count === 1)).toBe(true);
      expect(journal.snapshot()).toMatchObject({ isFailed: false, recoveries: 1 });
    } finally {
      delivering.abort();
      await delivered;
      await new Promise((resolve) => server.close(resolve));
      await intake.close({ timeoutMs: 5_000 });
      await journal.close();
    }
  }, 60_000);
});

/** A webhook endpoint on loopback: 200 once stored (or a duplicate), 503 when busy, 500 on failure. */
async function listen(intake: UpdateIntake, answers: number[]): Promise<Server> {
  const server = createServer((request, response) => {
    let body = "";
    request.on("data", (chunk) => {
      body += chunk;
    });
    request.on("end", () => {
      const reply = (status: number) => {
        answers.push(status);
        response.writeHead(status).end();
      };
      intake.accept(JSON.parse(body) as Update).then(
        (result) => reply(result.status === "busy" ? 503 : 200),
        () => reply(500),
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return server;
}

/**
 * Plays Telegram's webhook side over the sim's updates: each update is posted until the endpoint
 * answers 2xx (after a short pause when it does not), and only then confirmed.
 */
async function deliverAsTelegramDoes(
  sim: BotApiSim,
  server: Server,
  signal: AbortSignal,
): Promise<void> {
  const getUpdates = getUpdatesOf(sim);
  const { port } = server.address() as AddressInfo;
  let offset: number | undefined;
  const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
  while (!signal.aborted) {
    const batch = await getUpdates(
      { ...(offset === undefined ? {} : { offset }), limit: 100, timeout: 0 },
      { signal },
    ).catch(() => []);
    for (const update of batch) {
      for (;;) {
        if (signal.aborted) return;
        const response = await fetch(`http://127.0.0.1:${port}/`, {
          method: "POST",
          body: JSON.stringify(update),
          signal,
        }).catch(() => undefined);
        if (response !== undefined && response.status < 300) break;
        await pause(200);
      }
      offset = update.update_id + 1;
    }
    await pause(50);
  }
}
