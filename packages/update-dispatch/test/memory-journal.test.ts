// MemoryUpdateJournal against the UpdateJournal contract: idempotent by update_id, arrival order,
// a bounded window of finished ids, application state as JSON, closed means closed.

import { describe, expect, it } from "vitest";
import { MemoryUpdateJournal } from "../src/index.js";
import { privateMessage } from "./fixtures.js";

const ids = async (journal: MemoryUpdateJournal) =>
  (await journal.unfinished()).map((update) => update.update_id);

describe("MemoryUpdateJournal", () => {
  it("says it is not durable", () => {
    expect(new MemoryUpdateJournal().snapshot()).toEqual({
      kind: "memory",
      isDurable: false,
      unfinished: 0,
      highestUpdateId: undefined,
    });
  });

  it("stores each update_id once, keeps arrival order and the highest id", async () => {
    const journal = new MemoryUpdateJournal();
    const first = await journal.append([privateMessage(5, 1), privateMessage(3, 1)]);
    expect(first.appended.map((update) => update.update_id)).toEqual([5, 3]);
    const second = await journal.append([
      privateMessage(3, 1),
      privateMessage(4, 2),
      privateMessage(4, 2),
    ]);
    expect(second).toMatchObject({ duplicates: 2 });
    expect(second.appended.map((update) => update.update_id)).toEqual([4]);
    expect(await ids(journal)).toEqual([5, 3, 4]);
    expect(await journal.highestUpdateId()).toBe(5);
    await journal.finish(5);
    await journal.finish(5);
    await journal.finish(99);
    expect(await ids(journal)).toEqual([3, 4]);
    expect((await journal.append([privateMessage(5, 1)])).duplicates).toBe(1);
    expect(await journal.highestUpdateId()).toBe(5);
    expect(journal.snapshot()).toMatchObject({ unfinished: 2, highestUpdateId: 5 });
  });

  it("remembers the last `dedupeWindow` finished ids", async () => {
    const journal = new MemoryUpdateJournal({ dedupeWindow: 2 });
    await journal.append([1, 2, 3].map((id) => privateMessage(id, id)));
    for (const id of [1, 2, 3]) await journal.finish(id);
    const again = await journal.append([1, 2, 3].map((id) => privateMessage(id, id)));
    expect(again.appended.map((update) => update.update_id)).toEqual([1]);
    const none = new MemoryUpdateJournal({ dedupeWindow: 0 });
    await none.append([privateMessage(1, 1)]);
    await none.finish(1);
    expect((await none.append([privateMessage(1, 1)])).appended).toHaveLength(1);
  });

  it("rejects, storing nothing, a batch with an update without an integer update_id", async () => {
    const journal = new MemoryUpdateJournal();
    const bad = { update_id: "7" } as unknown as ReturnType<typeof privateMessage>;
    await expect(journal.append([privateMessage(1, 1), bad])).rejects.toThrow(TypeError);
    expect(await ids(journal)).toEqual([]);
  });

  it("keeps application state as JSON copies", async () => {
    const journal = new MemoryUpdateJournal();
    const job = { chatId: 1, step: 2, tags: ["a"] };
    await journal.putState("job:1", job);
    job.step = 3;
    await journal.putState("job:2", { nested: { ok: true } });
    const state = await journal.state();
    expect([...state]).toEqual([
      ["job:1", { chatId: 1, step: 2, tags: ["a"] }],
      ["job:2", { nested: { ok: true } }],
    ]);
    await journal.deleteState("job:1");
    await journal.deleteState("missing");
    expect([...(await journal.state()).keys()]).toEqual(["job:2"]);
    await expect(journal.putState("bad", 1n as never)).rejects.toThrow(TypeError);
    await expect(journal.putState("bad", (() => 1) as never)).rejects.toThrow(TypeError);
  });

  it("rejects every method after close with ERR_JOURNAL_CLOSED; close is idempotent", async () => {
    const journal = new MemoryUpdateJournal();
    await journal.close();
    await journal.close();
    const closed = { code: "ERR_JOURNAL_CLOSED" };
    await expect(journal.append([])).rejects.toMatchObject(closed);
    await expect(journal.finish(1)).rejects.toMatchObject(closed);
    await expect(journal.unfinished()).rejects.toMatchObject(closed);
    await expect(journal.highestUpdateId()).rejects.toMatchObject(closed);
    await expect(journal.compact()).rejects.toMatchObject(closed);
    await expect(journal.restartIds()).rejects.toMatchObject(closed);
    await expect(journal.putState("a", 1)).rejects.toMatchObject(closed);
    await expect(journal.deleteState("a")).rejects.toMatchObject(closed);
    await expect(journal.state()).rejects.toMatchObject(closed);
    expect(journal.snapshot().kind).toBe("memory");
  });

  it("restartIds forgets finished ids within the window, and refuses while one is unfinished", async () => {
    const journal = new MemoryUpdateJournal({ dedupeWindow: 4 });
    await journal.append([privateMessage(500, 1), privateMessage(501, 1)]);
    await journal.finish(500);
    await expect(journal.restartIds()).rejects.toMatchObject({ code: "ERR_JOURNAL_UNFINISHED" });
    expect(await journal.highestUpdateId()).toBe(501);
    await journal.finish(501);
    await journal.restartIds();
    expect(await journal.highestUpdateId()).toBeUndefined();
    const { appended, duplicates } = await journal.append([
      privateMessage(3, 1),
      privateMessage(500, 1),
    ]);
    expect(appended.map((update) => update.update_id)).toEqual([3, 500]);
    expect(duplicates).toBe(0);
    // The ring starts over: the window still holds the last four finishes after the restart.
    for (const id of [3, 500]) await journal.finish(id);
    expect((await journal.append([privateMessage(3, 1)])).duplicates).toBe(1);
  });

  it("takes only ids that are integers >= 0, like every journal", async () => {
    const journal = new MemoryUpdateJournal();
    await expect(journal.append([privateMessage(-1, 1)])).rejects.toThrow(
      "Expected an update with an `update_id` that is an integer >= 0",
    );
    expect(await journal.highestUpdateId()).toBeUndefined();
  });

  it("checks its options whole", () => {
    expect(() => new MemoryUpdateJournal({ dedupeWindw: 1 } as never)).toThrow(
      "Unknown option `dedupeWindw` in `options` (did you mean `dedupeWindow`?)",
    );
    expect(() => new MemoryUpdateJournal({ dedupeWindow: -1 })).toThrow(
      "Expected `dedupeWindow` to be an integer >= 0 and <= 1048576, got -1",
    );
    expect(() => new MemoryUpdateJournal({ dedupeWindow: 1_048_577 })).toThrow(RangeError);
  });
});
