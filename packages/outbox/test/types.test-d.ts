// The public types a user of the outbox relies on, checked by the compiler (vitest's typecheck):
// inference of enqueue, outcome unions that narrow, readonly options and snapshots, unknown
// option keys refused, and the write vocabulary's overloads.

import { describe, expectTypeOf, it } from "vitest";
import {
  type MethodClass,
  type OutboxOperation,
  type OutboxOutcome,
  type OutboxSnapshot,
  type PacingDecision,
  type PacingStore,
  Priority,
  planWrite,
  replacingProgress,
  type StreamOutcome,
  TelegramOutbox,
  type TelegramOutboxOptions,
  unwrapOutcome,
  type WritePlan,
  writeKeys,
  writeOperation,
} from "../src/index.js";

declare const outbox: TelegramOutbox;

describe("TelegramOutbox", () => {
  it("infers an op's result type from execute, through enqueue and unwrapOutcome", () => {
    const sent = outbox.enqueue({ chatId: 1, execute: async () => ({ message_id: 7 }) });
    expectTypeOf(sent).toEqualTypeOf<Promise<OutboxOutcome<{ message_id: number }>>>();
    expectTypeOf(unwrapOutcome<number>).returns.toEqualTypeOf<number | undefined>();
  });

  it("narrows an outcome by its status", () => {
    const outcome = {} as OutboxOutcome<string>;
    if (outcome.status === "delivered") {
      if (outcome.notModified) expectTypeOf(outcome.result).toEqualTypeOf<undefined>();
      else {
        expectTypeOf(outcome.result).toEqualTypeOf<string>();
        expectTypeOf(outcome.followUp).toEqualTypeOf<Promise<OutboxOutcome<unknown>> | undefined>();
      }
    }
    if (outcome.status === "superseded") {
      expectTypeOf(outcome.reason).toEqualTypeOf<"coalesced" | "dropped">();
    }
    if (outcome.status === "failed") expectTypeOf(outcome.maybeDelivered).toEqualTypeOf<boolean>();
    expectTypeOf<OutboxOutcome<string>["status"]>().toEqualTypeOf<
      "delivered" | "superseded" | "failed" | "closed" | "rejected"
    >();
  });

  it("takes readonly, optional options and refuses an unknown key", () => {
    expectTypeOf<TelegramOutboxOptions>().toExtend<{ readonly maxInFlight?: number | undefined }>();
    expectTypeOf({}).toExtend<TelegramOutboxOptions>();
    // @ts-expect-error a misspelt option is a compile error, as it is a TypeError at run time
    new TelegramOutbox({ maxPendingPerchat: 5 });
    // @ts-expect-error an option has its type
    new TelegramOutbox({ maxInFlight: "32" });
  });

  it("hands out readonly snapshots", () => {
    const snapshot = outbox.snapshot();
    expectTypeOf(snapshot).toEqualTypeOf<OutboxSnapshot>();
    // @ts-expect-error a snapshot is read, never written
    snapshot.pending = 0;
    // @ts-expect-error counters too
    snapshot.counters.delivered = 0;
  });

  it("names priorities as literal tiers, and pacing answers as a union", () => {
    expectTypeOf(Priority.send).toEqualTypeOf<0>();
    expectTypeOf(Priority.edit).toEqualTypeOf<2>();
    const decision = {} as PacingDecision;
    if (!decision.granted) expectTypeOf(decision.waitMs).toEqualTypeOf<number>();
    expectTypeOf<PacingStore["acquire"]>().returns.toEqualTypeOf<
      PacingDecision | Promise<PacingDecision>
    >();
  });
});

describe("the write vocabulary", () => {
  it("plans a known write for sure, any other method maybe", () => {
    expectTypeOf(planWrite("sendMessage", {})).toEqualTypeOf<WritePlan>();
    expectTypeOf(planWrite("getUpdates" as string, {})).toEqualTypeOf<WritePlan | undefined>();
    expectTypeOf<WritePlan["methodClass"]>().toEqualTypeOf<Exclude<MethodClass, "read">>();
  });

  it("keeps the result type through writeOperation and replacingProgress", () => {
    const send = writeOperation(planWrite("sendMessage", {}), async () => ({ message_id: 1 }));
    expectTypeOf(send).toEqualTypeOf<OutboxOperation<{ message_id: number }>>();
    const final = replacingProgress(send, 5, async () => true);
    expectTypeOf(final).toEqualTypeOf<OutboxOperation<{ message_id: number }>>();
    expectTypeOf(writeKeys.edit).parameters.toEqualTypeOf<
      [target: number | string, method?: string]
    >();
  });
});

describe("streams", () => {
  it("narrow a stream's outcome by its status", () => {
    const outcome = {} as StreamOutcome;
    if (outcome.status === "failed") expectTypeOf(outcome.maybeDelivered).toEqualTypeOf<boolean>();
    expectTypeOf(outcome.messages).toExtend<readonly { message_id: number }[]>();
  });
});
