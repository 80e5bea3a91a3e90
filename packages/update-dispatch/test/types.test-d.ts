// The public types of the dispatcher, the intake and the journals, checked by the compiler
// (vitest's typecheck): results that narrow, readonly options with unknown keys refused, readonly
// snapshots, and the memory journal fitting the journal contract.

import type { Update } from "@grammyjs/types";
import { describe, expectTypeOf, it } from "vitest";
import {
  type AcceptResult,
  type CloseResult,
  type EnqueueResult,
  type KeyKind,
  type MemoryUpdateJournal,
  type PollingStoppedError,
  type RejectReason,
  type UpdateDispatchError,
  UpdateDispatcher,
  type UpdateDispatcherOptions,
  type UpdateIntakeOptions,
  type UpdateJournal,
} from "../src/index.js";

declare const dispatcher: UpdateDispatcher;

describe("UpdateDispatcher", () => {
  it("takes a processor of an update and a signal", () => {
    new UpdateDispatcher(async (update, signal) => {
      expectTypeOf(update).toEqualTypeOf<Update>();
      expectTypeOf(signal).toEqualTypeOf<AbortSignal>();
    });
  });

  it("answers enqueue with a result that narrows", () => {
    expectTypeOf(dispatcher.enqueue({ update_id: 1 })).toEqualTypeOf<Promise<EnqueueResult>>();
    const result = {} as EnqueueResult;
    if (result.status === "accepted") expectTypeOf(result.keyKind).toEqualTypeOf<KeyKind>();
    if (result.status === "rejected") expectTypeOf(result.reason).toEqualTypeOf<RejectReason>();
    expectTypeOf(dispatcher.close()).toEqualTypeOf<Promise<CloseResult>>();
    expectTypeOf<CloseResult["unstarted"]>().toEqualTypeOf<readonly Update[]>();
  });

  it("takes readonly options and refuses an unknown key", () => {
    expectTypeOf<UpdateDispatcherOptions>().toExtend<{
      readonly maxConcurrency?: number | undefined;
    }>();
    // @ts-expect-error a misspelt option
    new UpdateDispatcher(() => {}, { maxConcurency: 4 });
  });

  it("hands out readonly snapshots", () => {
    const snapshot = dispatcher.snapshot();
    // @ts-expect-error a snapshot is read, never written
    snapshot.queued = 0;
  });
});

describe("the intake and its journals", () => {
  it("answers accept with a result that narrows, and takes any journal", () => {
    expectTypeOf<AcceptResult["status"]>().toEqualTypeOf<
      "stored" | "duplicate" | "busy" | "closed"
    >();
    expectTypeOf<MemoryUpdateJournal>().toExtend<UpdateJournal>();
    expectTypeOf<UpdateIntakeOptions["journal"]>().toEqualTypeOf<UpdateJournal | undefined>();
  });

  it("names its errors by code", () => {
    expectTypeOf<PollingStoppedError>().toExtend<UpdateDispatchError>();
    expectTypeOf<PollingStoppedError["code"]>().toEqualTypeOf<
      "ERR_POLLING_CONFLICT" | "ERR_POLLING_UNAUTHORIZED"
    >();
  });
});
