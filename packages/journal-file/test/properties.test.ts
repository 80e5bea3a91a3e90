// Properties over random schedules: concurrent operations (compactions among them) leave on disk
// exactly what the journal reported, and any damage to a log's tail either opens as a prefix of
// what was written or fails as ERR_JOURNAL_CORRUPT — never anything else.

import { readFile, writeFile } from "node:fs/promises";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { FileUpdateJournal, JournalError } from "../src/index.js";
import { idsOf, logPath, temporaryDirectory, updates } from "./helpers.js";

type Operation =
  | { readonly op: "append"; readonly ids: number[] }
  | { readonly op: "finish"; readonly id: number }
  | { readonly op: "put"; readonly key: string; readonly value: number }
  | { readonly op: "delete"; readonly key: string }
  | { readonly op: "compact" };

const operation: fc.Arbitrary<Operation> = fc.oneof(
  fc.record({ op: fc.constant("append" as const), ids: fc.array(fc.nat(40), { maxLength: 4 }) }),
  fc.record({ op: fc.constant("finish" as const), id: fc.nat(40) }),
  fc.record({ op: fc.constant("put" as const), key: fc.constantFrom("a", "b"), value: fc.nat() }),
  fc.record({ op: fc.constant("delete" as const), key: fc.constantFrom("a", "b") }),
  fc.constant({ op: "compact" as const }),
);

function run(journal: FileUpdateJournal, step: Operation): Promise<unknown> {
  switch (step.op) {
    case "append":
      return journal.append(updates(...step.ids));
    case "finish":
      return journal.finish(step.id);
    case "put":
      return journal.putState(step.key, step.value);
    case "delete":
      return journal.deleteState(step.key);
    case "compact":
      return journal.compact();
  }
}

async function view(journal: FileUpdateJournal) {
  return {
    unfinished: idsOf(await journal.unfinished()),
    highest: await journal.highestUpdateId(),
    state: [...(await journal.state())],
  };
}

describe("concurrent operations", () => {
  it("leave on disk exactly what the journal reported", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.array(operation, { minLength: 1, maxLength: 6 }), { maxLength: 6 }),
        fc.constantFrom(300, 2048, Number.POSITIVE_INFINITY),
        async (rounds, compactAfterBytes) => {
          const directory = await temporaryDirectory();
          const journal = await FileUpdateJournal.open(directory, { compactAfterBytes });
          for (const round of rounds) await Promise.all(round.map((step) => run(journal, step)));
          const before = await view(journal);
          await journal.close();
          const reopened = await FileUpdateJournal.open(directory);
          expect(await view(reopened)).toEqual(before);
          await reopened.close();
        },
      ),
      { numRuns: 40 },
    );
  });
});

describe("a damaged tail", () => {
  it("opens as a prefix of what was written, or fails as ERR_JOURNAL_CORRUPT", async () => {
    const directory = await temporaryDirectory();
    const journal = await FileUpdateJournal.open(directory);
    // The unfinished ids after each record the loop writes: what any prefix of the log holds.
    const prefixes: number[][] = [[]];
    let unfinished: number[] = [];
    for (let batch = 0; batch < 8; batch++) {
      const ids = [batch * 3, batch * 3 + 1, batch * 3 + 2];
      await journal.append(updates(...ids));
      unfinished = [...unfinished, ...ids];
      prefixes.push(unfinished);
      await journal.finish(batch * 3);
      unfinished = unfinished.filter((id) => id !== batch * 3);
      prefixes.push(unfinished);
    }
    const crashed = await readFile(logPath(directory));
    await journal.close();
    await fc.assert(
      fc.asyncProperty(
        fc.nat(crashed.length - 1),
        fc.uint8Array({ maxLength: 64 }),
        fc.array(fc.nat(crashed.length - 1), { maxLength: 3 }),
        async (cut, garbage, flips) => {
          const damaged = Buffer.concat([crashed.subarray(0, Math.max(cut, 8)), garbage]);
          for (const at of flips) if (at < damaged.length) damaged[at] = (damaged[at] ?? 0) ^ 0x10;
          await writeFile(logPath(directory), damaged);
          const opened = await FileUpdateJournal.open(directory).then(
            (value) => ({ value }),
            (error: unknown) => ({ error }),
          );
          if ("error" in opened) {
            expect(opened.error).toBeInstanceOf(JournalError);
            expect((opened.error as JournalError).code).toBe("ERR_JOURNAL_CORRUPT");
            return;
          }
          const reopened = opened.value;
          expect(prefixes).toContainEqual(idsOf(await reopened.unfinished()));
          for (const update of await reopened.unfinished()) {
            expect(update).toEqual(updates(update.update_id)[0]);
          }
          await reopened.close();
        },
      ),
      { numRuns: 150 },
    );
  });
});
