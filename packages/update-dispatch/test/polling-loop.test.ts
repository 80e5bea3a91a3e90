// PollingLoop on its own, over a store of its own (as @telepace/redis builds one): what it asks
// the store, how it checks its arguments, and that a diagnostics listener cannot break it.

import type { Update } from "@grammyjs/types";
import { ManualClock } from "@telepace/core";
import { describe, expect, it } from "vitest";
import { type PollingEvent, PollingLoop, type PollingStore } from "../src/index.js";
import { privateMessage } from "./fixtures.js";
import { FakeTelegram, until } from "./intake-harness.js";

/** A store that keeps everything in an array, with a fixed room and no processing. */
function arrayStore(room: number) {
  const stored: Update[] = [];
  let restarts = 0;
  const store: PollingStore = {
    room: () => room - stored.length,
    waitForRoom: (signal) =>
      new Promise((resolve) => signal.addEventListener("abort", () => resolve())),
    highestUpdateId: () => stored.at(-1)?.update_id,
    append: async (updates) => void stored.push(...updates),
    restartIds: async () => {
      restarts++;
      stored.length = 0;
    },
  };
  return { store, stored, restarts: () => restarts };
}

describe("PollingLoop", () => {
  it("asks Telegram nothing once aborted while the store answered", async () => {
    const clock = new ManualClock();
    const { store } = arrayStore(10);
    const stop = new AbortController();
    const calls: AbortSignal[] = [];
    const loop = new PollingLoop(
      {
        ...store,
        // The abort comes while the store's answer is on its way (a round trip to Redis).
        highestUpdateId: async () => {
          stop.abort();
          return undefined;
        },
      },
      {
        // Waits for its abort only, as a call that was never told of an earlier one would.
        getUpdates: (_params, { signal }) => {
          calls.push(signal);
          return new Promise(() => {});
        },
        clock,
      },
    );
    await loop.run({ signal: stop.signal });
    expect(calls).toHaveLength(0);
    expect(loop.snapshot()).toMatchObject({ state: "idle", polls: 0 });
  });

  it("polls into its store, asks no more than the room, and pauses at the bound", async () => {
    const clock = new ManualClock();
    const telegram = new FakeTelegram(clock);
    const { store, stored } = arrayStore(3);
    const events: PollingEvent["type"][] = [];
    const loop = new PollingLoop(store, {
      getUpdates: telegram.getUpdates,
      clock,
      pollLimit: 2,
      onEvent: (event) => {
        events.push(event.type);
        throw new Error("a listener that throws");
      },
    });
    telegram.push(...[1, 2, 3, 4].map((id) => privateMessage(id, id)));
    const stop = new AbortController();
    const running = loop.run({ signal: stop.signal });
    await until(() => loop.state === "paused");
    expect(stored.map((update) => update.update_id)).toEqual([1, 2, 3]);
    expect(telegram.calls.map((call) => [call.offset, call.limit])).toEqual([
      [undefined, 2],
      [3, 1],
    ]);
    expect(events).toEqual(["polled", "polled", "paused"]);
    await expect(loop.run({ signal: stop.signal })).rejects.toMatchObject({
      code: "ERR_INTAKE_RUNNING",
    });
    stop.abort();
    await running;
    expect(loop.snapshot()).toMatchObject({ state: "idle", polls: 2, fetched: 3, pauses: 1 });
  });

  it("confirms what is stored when no poll has, and never rejects", async () => {
    const clock = new ManualClock();
    const telegram = new FakeTelegram(clock);
    const { store, stored } = arrayStore(10);
    stored.push(privateMessage(7, 1));
    const loop = new PollingLoop(store, { getUpdates: telegram.getUpdates, clock });
    const { signal } = new AbortController();
    await loop.confirm({ signal });
    await loop.confirm({ signal }); // confirmed already
    expect(telegram.calls).toEqual([{ offset: 8, limit: 1, timeout: 0 }]);
    telegram.failures.push(new Error("down"));
    stored.push(privateMessage(8, 1));
    await expect(loop.confirm({ signal })).resolves.toBeUndefined();
  });

  it.each([
    [undefined, {}, "Expected `store` to be a PollingStore, got undefined"],
    [{ room: () => 1 }, {}, "Expected `store` to be an object with `room`, `waitForRoom`"],
    ["store", undefined, "Expected `options` to be an object, got undefined"],
    ["store", {}, "Expected `getUpdates` to be a function, got undefined"],
    ["store", { getUpdates: () => {}, polLimit: 1 }, "(did you mean `pollLimit`?)"],
    ["store", { getUpdates: () => {}, onEvent: 1 }, "Expected `onEvent` to be a function"],
  ])("rejects a bad store or options: %j %j", (store, options, message) => {
    const valid = arrayStore(1).store;
    expect(
      () => new PollingLoop((store === "store" ? valid : store) as never, options as never),
    ).toThrow(message);
  });
});
