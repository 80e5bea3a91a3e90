// The public types of the file journal, checked by the compiler (vitest's typecheck): it is an
// UpdateJournal, opened asynchronously, with readonly options and snapshots.

import type { UpdateJournal } from "@telepace/update-dispatch";
import { describe, expectTypeOf, it } from "vitest";
import {
  type FileJournalSnapshot,
  FileUpdateJournal,
  type FileUpdateJournalOptions,
  type JournalError,
  type JournalErrorCode,
} from "../src/index.js";

describe("FileUpdateJournal", () => {
  it("is an UpdateJournal, opened asynchronously", () => {
    expectTypeOf<FileUpdateJournal>().toExtend<UpdateJournal>();
    expectTypeOf(FileUpdateJournal.open).returns.toEqualTypeOf<Promise<FileUpdateJournal>>();
    // @ts-expect-error it is opened, never constructed: open() takes the directory's lock
    new FileUpdateJournal();
  });

  it("takes readonly options and refuses an unknown key", () => {
    expectTypeOf<FileUpdateJournalOptions>().toExtend<{ readonly compactAfterBytes?: number }>();
    // @ts-expect-error a misspelt option
    void FileUpdateJournal.open("dir", { compactAfterByte: 1 });
  });

  it("hands out readonly snapshots that say they are durable", () => {
    const snapshot = {} as FileJournalSnapshot;
    expectTypeOf(snapshot.isDurable).toEqualTypeOf<true>();
    // @ts-expect-error a snapshot is read, never written
    snapshot.directory = "elsewhere";
    expectTypeOf<JournalError["code"]>().toEqualTypeOf<JournalErrorCode>();
  });
});
