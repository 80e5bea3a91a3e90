// The contract every UpdateJournal keeps, as a vitest suite: `describeJournalContract(name, target)`.
// Self-contained (its own updates and a reference model), so the memory journal's and the file
// journal's tests run the same cases.

import type { Update } from "@grammyjs/types";
import fc from "fast-check";
import { afterEach, describe, expect, it } from "vitest";

/** A JSON value in a journal's application state. */
type StateValue = string | number | boolean | null | readonly StateValue[] | StateRecord;
interface StateRecord {
  readonly [key: string]: StateValue;
}

/**
 * What the suite calls: the `UpdateJournal` of `@telepace/update-dispatch`, spelled out here
 * because that package's own tests use this one (depending on it would be a cycle). Any
 * `UpdateJournal` fits.
 */
export interface ContractJournal {
  append(
    updates: readonly Update[],
  ): Promise<{ readonly appended: readonly Update[]; readonly duplicates: number }>;
  finish(updateId: number): Promise<void>;
  unfinished(): Promise<readonly Update[]>;
  highestUpdateId(): Promise<number | undefined>;
  restartIds(): Promise<void>;
  compact(): Promise<void>;
  putState(key: string, value: StateValue): Promise<void>;
  deleteState(key: string): Promise<void>;
  state(): Promise<ReadonlyMap<string, unknown>>;
  snapshot(): {
    readonly kind: string;
    readonly isDurable: boolean;
    readonly unfinished: number;
    readonly highestUpdateId: number | undefined;
  };
  close(): Promise<void>;
}

/** How the suite gets journals of the implementation under test. */
export interface JournalContractTarget<Journal extends ContractJournal = ContractJournal> {
  /** Opens a fresh, empty journal. The suite closes every journal it gets. */
  open(): Promise<Journal>;
  /**
   * Durable journals: closes `journal` and opens its storage again. Without it the suite skips
   * the survives-a-reopen tests.
   */
  readonly reopen?: (journal: Journal) => Promise<Journal>;
  /** Whether `error` is the implementation's closed error. @defaultValue `code` ends in `CLOSED` */
  readonly isClosedError?: (error: unknown) => boolean;
  /** Runs of the model-based property. @defaultValue 25 */
  readonly propertyRuns?: number;
}

/** A private-chat text update whose text names its id, so a mixed-up payload shows. */
export function contractUpdate(updateId: number): Update {
  return {
    update_id: updateId,
    message: {
      message_id: updateId,
      date: 1_700_000_000,
      chat: { id: 7, type: "private", first_name: "contract" },
      from: { id: 7, is_bot: false, first_name: "contract" },
      text: `update ${updateId}`,
    },
  };
}

const updates = (...ids: number[]): Update[] => ids.map(contractUpdate);
/** The code every implementation's `restartIds()` rejects with while an update is unfinished. */
const isUnfinishedCode = "ERR_JOURNAL_UNFINISHED";
const idsOf = (list: readonly Update[]): number[] => list.map((update) => update.update_id);

function defaultIsClosedError(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === "string" && code.endsWith("CLOSED");
}

/** What a journal must say after a sequence of operations. */
class ReferenceJournal {
  readonly stored = new Set<number>();
  unfinished: number[] = [];
  highest: number | undefined;
  readonly state = new Map<string, StateValue>();

  append(ids: readonly number[]): { appended: number[]; duplicates: number } {
    const appended: number[] = [];
    for (const id of ids) {
      if (this.stored.has(id)) continue;
      this.stored.add(id);
      appended.push(id);
      this.unfinished.push(id);
      this.highest = Math.max(this.highest ?? id, id);
    }
    return { appended, duplicates: ids.length - appended.length };
  }

  finish(id: number): void {
    this.unfinished = this.unfinished.filter((other) => other !== id);
  }

  /** Whether a restart is allowed; if so, forgets every stored id. */
  restartIds(): boolean {
    if (this.unfinished.length > 0) return false;
    this.stored.clear();
    this.highest = undefined;
    return true;
  }
}

type Operation =
  | { readonly op: "append"; readonly ids: number[] }
  | { readonly op: "finish"; readonly id: number }
  | { readonly op: "compact" }
  | { readonly op: "restartIds" }
  | { readonly op: "put"; readonly key: string; readonly value: StateValue }
  | { readonly op: "delete"; readonly key: string }
  | { readonly op: "reopen" };

const stateValue: fc.Arbitrary<StateValue> = fc.oneof(
  fc.string({ maxLength: 8 }),
  fc.integer(),
  fc.boolean(),
  fc.constant(null),
  fc.array(fc.integer(), { maxLength: 3 }),
  fc.record({ job: fc.string({ maxLength: 4 }), step: fc.nat(9) }),
);

function operations(isDurable: boolean): fc.Arbitrary<Operation[]> {
  const id = fc.nat(30);
  const key = fc.constantFrom("a", "b", "c");
  const choices: fc.Arbitrary<Operation>[] = [
    fc.record({ op: fc.constant("append" as const), ids: fc.array(id, { maxLength: 5 }) }),
    fc.record({ op: fc.constant("finish" as const), id }),
    fc.constant({ op: "compact" as const }),
    fc.constant({ op: "restartIds" as const }),
    fc.record({ op: fc.constant("put" as const), key, value: stateValue }),
    fc.record({ op: fc.constant("delete" as const), key }),
  ];
  if (isDurable) choices.push(fc.constant({ op: "reopen" as const }));
  return fc.array(fc.oneof(...choices), { maxLength: 20 });
}

/** Registers the contract tests of one implementation. */
export function describeJournalContract<Journal extends ContractJournal>(
  name: string,
  target: JournalContractTarget<Journal>,
): void {
  const isClosedError = target.isClosedError ?? defaultIsClosedError;
  const reopen = target.reopen;
  let open: Journal[] = [];

  const fresh = async (): Promise<Journal> => {
    const journal = await target.open();
    open.push(journal);
    return journal;
  };
  const again = async (journal: Journal): Promise<Journal> => {
    if (reopen === undefined) throw new Error("reopen is not available");
    const next = await reopen(journal);
    open.push(next);
    return next;
  };

  describe(`UpdateJournal contract: ${name}`, () => {
    afterEach(async () => {
      await Promise.all(open.map((journal) => journal.close()));
      open = [];
    });

    it("starts empty", async () => {
      const journal = await fresh();
      expect(await journal.unfinished()).toEqual([]);
      expect(await journal.highestUpdateId()).toBeUndefined();
      expect((await journal.state()).size).toBe(0);
      const snapshot = journal.snapshot();
      expect(Object.isFrozen(snapshot)).toBe(true);
      expect(snapshot).toMatchObject({ unfinished: 0, highestUpdateId: undefined });
      expect(typeof snapshot.kind).toBe("string");
      expect(typeof snapshot.isDurable).toBe("boolean");
    });

    it("stores a batch in order and returns what it stored", async () => {
      const journal = await fresh();
      const batch = updates(10, 11, 12);
      const result = await journal.append(batch);
      expect(result).toEqual({ appended: batch, duplicates: 0 });
      expect(await journal.unfinished()).toEqual(batch);
      expect(await journal.highestUpdateId()).toBe(12);
      expect(journal.snapshot()).toMatchObject({ unfinished: 3, highestUpdateId: 12 });
    });

    it("counts repeats within a batch and ids stored before as duplicates", async () => {
      const journal = await fresh();
      const first = await journal.append(updates(1, 2, 2));
      expect(idsOf(first.appended)).toEqual([1, 2]);
      expect(first.duplicates).toBe(1);
      const second = await journal.append(updates(2, 3));
      expect(idsOf(second.appended)).toEqual([3]);
      expect(second.duplicates).toBe(1);
      expect(idsOf(await journal.unfinished())).toEqual([1, 2, 3]);
      expect(await journal.append([])).toEqual({ appended: [], duplicates: 0 });
    });

    it("keeps finished ids as duplicates, also after compaction", async () => {
      const journal = await fresh();
      await journal.append(updates(1, 2, 3));
      await journal.finish(2);
      expect((await journal.append(updates(2))).duplicates).toBe(1);
      await journal.compact();
      const again = await journal.append(updates(2, 1, 4));
      expect(idsOf(again.appended)).toEqual([4]);
      expect(again.duplicates).toBe(2);
    });

    it("finishes one update; unknown and repeated finishes are no-ops", async () => {
      const journal = await fresh();
      await journal.append(updates(1, 2, 3));
      await journal.finish(2);
      await journal.finish(2);
      await journal.finish(99);
      expect(idsOf(await journal.unfinished())).toEqual([1, 3]);
      expect(journal.snapshot().unfinished).toBe(2);
    });

    it("lists unfinished updates in arrival order, not id order", async () => {
      const journal = await fresh();
      await journal.append(updates(5));
      await journal.append(updates(3, 4));
      await journal.append(updates(1));
      expect(idsOf(await journal.unfinished())).toEqual([5, 3, 4, 1]);
      expect(await journal.highestUpdateId()).toBe(5);
    });

    it("keeps highestUpdateId through compaction when everything is finished", async () => {
      const journal = await fresh();
      await journal.append(updates(40, 41));
      await journal.finish(40);
      await journal.finish(41);
      await journal.compact();
      expect(await journal.unfinished()).toEqual([]);
      expect(await journal.highestUpdateId()).toBe(41);
    });

    it("compaction keeps unfinished updates and state", async () => {
      const journal = await fresh();
      await journal.append(updates(1, 2, 3, 4));
      await journal.finish(1);
      await journal.finish(3);
      await journal.putState("job", { step: 2 });
      await journal.compact();
      expect(await journal.unfinished()).toEqual(updates(2, 4));
      expect(await journal.state()).toEqual(new Map([["job", { step: 2 }]]));
    });

    it("puts, replaces and deletes state; deleting a missing key is a no-op", async () => {
      const journal = await fresh();
      await journal.putState("a", { jobs: [1, 2], owner: "x", done: false, note: null });
      await journal.putState("b", "first");
      await journal.putState("b", "second");
      await journal.deleteState("missing");
      expect(await journal.state()).toEqual(
        new Map<string, StateValue>([
          ["a", { jobs: [1, 2], owner: "x", done: false, note: null }],
          ["b", "second"],
        ]),
      );
      await journal.deleteState("a");
      expect([...(await journal.state()).keys()]).toEqual(["b"]);
    });

    it("stores each id once when overlapping appends run concurrently", async () => {
      const journal = await fresh();
      const results = await Promise.all([
        journal.append(updates(1, 2, 3)),
        journal.append(updates(2, 3, 4)),
        journal.append(updates(4, 5, 1)),
      ]);
      const stored = results.flatMap((result) => idsOf(result.appended));
      expect(stored.sort((a, b) => a - b)).toEqual([1, 2, 3, 4, 5]);
      expect(results.reduce((sum, result) => sum + result.duplicates, 0)).toBe(4);
      expect(idsOf(await journal.unfinished()).sort((a, b) => a - b)).toEqual([1, 2, 3, 4, 5]);
    });

    it("restartIds forgets every stored id and the highest, keeping state", async () => {
      const journal = await fresh();
      await journal.append(updates(1000, 1001));
      await journal.putState("job", "kept");
      await journal.finish(1000);
      await journal.finish(1001);
      await journal.restartIds();
      expect(await journal.highestUpdateId()).toBeUndefined();
      expect(journal.snapshot().highestUpdateId).toBeUndefined();
      // A new numbering, lower and overlapping the old ids: nothing is a duplicate.
      const result = await journal.append(updates(7, 1000, 8));
      expect(result).toEqual({ appended: updates(7, 1000, 8), duplicates: 0 });
      expect(await journal.highestUpdateId()).toBe(1000);
      expect(await journal.state()).toEqual(new Map([["job", "kept"]]));
      expect((await journal.append(updates(7))).duplicates).toBe(1);
    });

    it("restartIds rejects while an update is unfinished, changing nothing", async () => {
      const journal = await fresh();
      await journal.append(updates(5, 6));
      await journal.finish(5);
      const error = await journal.restartIds().then(
        () => undefined,
        (reason: unknown) => reason,
      );
      expect((error as { code?: unknown }).code).toBe(isUnfinishedCode);
      expect(await journal.highestUpdateId()).toBe(6);
      expect((await journal.append(updates(5, 6))).duplicates).toBe(2);
      expect(idsOf(await journal.unfinished())).toEqual([6]);
    });

    it("returns a fresh frozen snapshot each time", async () => {
      const journal = await fresh();
      const before = journal.snapshot();
      await journal.append(updates(1));
      const after = journal.snapshot();
      expect(before).not.toBe(after);
      expect(before.unfinished).toBe(0);
      expect(after.unfinished).toBe(1);
      expect(Object.isFrozen(after)).toBe(true);
    });

    it("closes idempotently, and every method rejects afterwards", async () => {
      const journal = await fresh();
      await journal.append(updates(1));
      await Promise.all([journal.close(), journal.close()]);
      await journal.close();
      const calls: (() => Promise<unknown>)[] = [
        () => journal.append(updates(2)),
        () => journal.finish(1),
        () => journal.unfinished(),
        () => journal.highestUpdateId(),
        () => journal.compact(),
        () => journal.restartIds(),
        () => journal.putState("a", 1),
        () => journal.deleteState("a"),
        () => journal.state(),
      ];
      for (const call of calls) {
        const error = await call().then(
          () => undefined,
          (reason: unknown) => reason,
        );
        expect(isClosedError(error), String(error)).toBe(true);
      }
    });

    describe.runIf(reopen !== undefined)("durability", () => {
      it("keeps unfinished updates, order, highest id, state and dedupe across a reopen", async () => {
        let journal = await fresh();
        await journal.append(updates(7, 5, 6));
        await journal.finish(5);
        await journal.putState("job", ["a", 1]);
        journal = await again(journal);
        expect(await journal.unfinished()).toEqual(updates(7, 6));
        expect(await journal.highestUpdateId()).toBe(7);
        expect(await journal.state()).toEqual(new Map([["job", ["a", 1]]]));
        const result = await journal.append(updates(5, 6, 7, 8));
        expect(idsOf(result.appended)).toEqual([8]);
        expect(result.duplicates).toBe(3);
      });

      it("keeps a restart of the ids across a reopen", async () => {
        let journal = await fresh();
        await journal.append(updates(900));
        await journal.finish(900);
        await journal.putState("job", 1);
        await journal.restartIds();
        await journal.append(updates(3));
        journal = await again(journal);
        expect(await journal.highestUpdateId()).toBe(3);
        expect(idsOf(await journal.unfinished())).toEqual([3]);
        expect(idsOf((await journal.append(updates(900, 3))).appended)).toEqual([900]);
        expect(await journal.state()).toEqual(new Map([["job", 1]]));
      });

      it("keeps the highest id and dedupe of a compacted, fully finished journal", async () => {
        let journal = await fresh();
        await journal.append(updates(1, 2));
        await journal.finish(1);
        await journal.finish(2);
        await journal.compact();
        journal = await again(journal);
        expect(await journal.highestUpdateId()).toBe(2);
        expect((await journal.append(updates(1, 2))).duplicates).toBe(2);
      });
    });

    it("matches a reference model over random operation sequences", async () => {
      await fc.assert(
        fc.asyncProperty(operations(reopen !== undefined), async (ops) => {
          let journal = await fresh();
          const model = new ReferenceJournal();
          for (const step of ops) {
            switch (step.op) {
              case "append": {
                const result = await journal.append(updates(...step.ids));
                const expected = model.append(step.ids);
                expect(idsOf(result.appended)).toEqual(expected.appended);
                expect(result.duplicates).toBe(expected.duplicates);
                break;
              }
              case "finish":
                await journal.finish(step.id);
                model.finish(step.id);
                break;
              case "compact":
                await journal.compact();
                break;
              case "restartIds": {
                const isAllowed = model.restartIds();
                const outcome = await journal.restartIds().then(
                  () => "restarted",
                  (error: unknown) => (error as { code?: unknown }).code,
                );
                expect(outcome).toBe(isAllowed ? "restarted" : isUnfinishedCode);
                break;
              }
              case "put":
                await journal.putState(step.key, step.value);
                model.state.set(step.key, step.value);
                break;
              case "delete":
                await journal.deleteState(step.key);
                model.state.delete(step.key);
                break;
              case "reopen":
                journal = await again(journal);
                break;
            }
            expect(idsOf(await journal.unfinished())).toEqual(model.unfinished);
            expect(await journal.highestUpdateId()).toBe(model.highest);
            expect(journal.snapshot().unfinished).toBe(model.unfinished.length);
          }
          expect(await journal.state()).toEqual(model.state);
          expect(await journal.unfinished()).toEqual(updates(...model.unfinished));
          await journal.close();
        }),
        { numRuns: target.propertyRuns ?? 25 },
      );
    });
  });
}
