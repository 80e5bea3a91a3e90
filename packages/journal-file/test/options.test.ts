// Options and arguments are checked whole: unknown keys with the closest name, types and ranges,
// and values the log could not store faithfully, before anything is written.

import { contractUpdate } from "@telepace/testing";
import { describe, expect, it } from "vitest";
import { FileUpdateJournal, fileUpdateJournalDefaults } from "../src/index.js";
import { temporaryDirectory } from "./helpers.js";

async function rejection(promise: Promise<unknown>): Promise<Error> {
  return promise.then(
    () => {
      throw new Error("expected a rejection");
    },
    (error: Error) => error,
  );
}

describe("FileUpdateJournal.open options", () => {
  it("has frozen defaults", () => {
    expect(fileUpdateJournalDefaults).toEqual({
      compactAfterBytes: 16 * 1024 * 1024,
      dedupeHorizon: 100_000,
    });
    expect(Object.isFrozen(fileUpdateJournalDefaults)).toBe(true);
  });

  it("rejects an unknown key with the closest valid name", async () => {
    const error = await rejection(
      FileUpdateJournal.open(await temporaryDirectory(), { compactAfterByte: 1 } as never),
    );
    expect(error).toBeInstanceOf(TypeError);
    expect(error.message).toBe(
      "Unknown option `compactAfterByte` in `options` (did you mean `compactAfterBytes`?)",
    );
  });

  it.each([
    [
      { compactAfterBytes: 0 },
      RangeError,
      "Expected `compactAfterBytes` to be an integer >= 1, got 0",
    ],
    [
      { compactAfterBytes: 1.5 },
      RangeError,
      "Expected `compactAfterBytes` to be an integer >= 1, got 1.5",
    ],
    [
      { compactAfterBytes: "1" },
      TypeError,
      'Expected `compactAfterBytes` to be an integer >= 1, got "1"',
    ],
    [{ dedupeHorizon: -1 }, RangeError, "Expected `dedupeHorizon` to be an integer >= 0, got -1"],
    [
      { logger: {} },
      TypeError,
      "Expected `logger` to be an object with `debug`, `info`, `warn`, `error`, got an object without `debug`, `info`, `warn`, `error`",
    ],
  ])("rejects %o", async (options, kind, message) => {
    const error = await rejection(
      FileUpdateJournal.open(await temporaryDirectory(), options as never),
    );
    expect(error).toBeInstanceOf(kind);
    expect(error.message).toBe(message);
  });

  it("rejects a directory that is not a non-empty string, and options that are not an object", async () => {
    await expect(FileUpdateJournal.open("")).rejects.toThrow(TypeError);
    await expect(FileUpdateJournal.open(7 as never)).rejects.toThrow(TypeError);
    await expect(FileUpdateJournal.open(await temporaryDirectory(), [] as never)).rejects.toThrow(
      "Expected `options` to be an object, got an array",
    );
  });

  it("takes Infinity for compactAfterBytes: no compaction of its own, compact() still works", async () => {
    const journal = await FileUpdateJournal.open(await temporaryDirectory(), {
      compactAfterBytes: Number.POSITIVE_INFINITY,
    });
    const large = (id: number) => ({ ...contractUpdate(id), big: "x".repeat(64 * 1024) });
    for (let id = 0; id < 32; id++) {
      await journal.append([large(id)]);
      await journal.finish(id);
    }
    expect(journal.snapshot().fileBytes).toBeGreaterThan(2 * 1024 * 1024);
    expect(journal.snapshot().compactions).toBe(0);
    await journal.compact();
    expect(journal.snapshot()).toMatchObject({
      compactions: 1,
      unfinished: 0,
      highestUpdateId: 31,
    });
    await journal.close();
  });

  it("takes 0 for dedupeHorizon: every id at or below the highest is a duplicate", async () => {
    const journal = await FileUpdateJournal.open(await temporaryDirectory(), { dedupeHorizon: 0 });
    await journal.append([contractUpdate(10)]);
    const late = await journal.append([contractUpdate(9), contractUpdate(10), contractUpdate(11)]);
    expect(late.appended.map((update) => update.update_id)).toEqual([11]);
    expect(late.duplicates).toBe(2);
    expect(journal.snapshot().idRanges).toBe(1);
    await journal.close();
  });
});

describe("arguments", () => {
  it("rejects batches that are not arrays of updates, storing nothing", async () => {
    const journal = await FileUpdateJournal.open(await temporaryDirectory());
    await expect(journal.append("x" as never)).rejects.toThrow(
      'Expected `updates` to be an array, got "x"',
    );
    await expect(journal.append([contractUpdate(1), null] as never)).rejects.toThrow(
      "Expected `updates[1]` to be an update object, got null",
    );
    await expect(journal.append([contractUpdate(1), { update_id: -3 }] as never)).rejects.toThrow(
      "Expected `updates[1].update_id` to be an integer >= 0, got -3",
    );
    await expect(journal.append([{ update_id: 2, big: 1n }] as never)).rejects.toThrow(TypeError);
    expect(await journal.unfinished()).toEqual([]);
    await expect(journal.finish("1" as never)).rejects.toThrow(
      'Expected `updateId` to be an integer >= 0, got "1"',
    );
    await journal.close();
  });

  it("rejects state that JSON would not give back unchanged", async () => {
    const journal = await FileUpdateJournal.open(await temporaryDirectory());
    const cycle: Record<string, unknown> = {};
    cycle.self = cycle;
    for (const value of [undefined, Number.NaN, () => 1, new Map(), { a: [1, Infinity] }, cycle]) {
      await expect(journal.putState("k", value as never)).rejects.toThrow(TypeError);
    }
    await expect(journal.putState("k", { a: [1, { b: undefined }] } as never)).rejects.toThrow(
      "Expected `value.a[1].b` to be a JSON value",
    );
    await expect(journal.putState(1 as never, 1)).rejects.toThrow(
      "Expected `key` to be a string, got 1",
    );
    expect((await journal.state()).size).toBe(0);
    await journal.close();
  });

  it("stores a copy of a state value, frozen", async () => {
    const journal = await FileUpdateJournal.open(await temporaryDirectory());
    const value = { steps: [1, 2] };
    await journal.putState("k", value);
    value.steps.push(3);
    const stored = (await journal.state()).get("k") as { steps: number[] };
    expect(stored).toEqual({ steps: [1, 2] });
    expect(Object.isFrozen(stored.steps)).toBe(true);
    await journal.close();
  });
});
