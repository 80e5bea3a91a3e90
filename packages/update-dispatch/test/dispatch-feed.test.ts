// The hand-over to the dispatcher on its own, against a scripted dispatcher: call order, the
// bound on unresolved calls, and a rejected update offered again.

import type { Update } from "@grammyjs/types";
import { createDeferred, type Deferred } from "@telepace/core";
import { describe, expect, it } from "vitest";
import type { EnqueueResult, UpdateDispatcher } from "../src/index.js";
import { DispatchFeed } from "../src/intake/dispatch-feed.js";
import { privateMessage } from "./fixtures.js";
import { settle } from "./harness.js";

function scripted() {
  const calls: { id: number; answer: Deferred<EnqueueResult> }[] = [];
  const dispatcher = {
    enqueue(update: Update, options?: { wait?: boolean }) {
      expect(options?.wait).toBe(true);
      const answer = createDeferred<EnqueueResult>();
      calls.push({ id: update.update_id, answer });
      return answer.promise;
    },
  } as unknown as UpdateDispatcher;
  return { dispatcher, calls };
}

const ACCEPTED: EnqueueResult = { status: "accepted", keyKind: "private" };

describe("DispatchFeed", () => {
  it("calls in push order with at most maxOutstanding unresolved", async () => {
    const { dispatcher, calls } = scripted();
    const feed = new DispatchFeed(dispatcher, 2);
    feed.push([1, 2, 3, 4].map((id) => privateMessage(id, id)));
    expect(calls.map((call) => call.id)).toEqual([1, 2]);
    expect(feed.pending).toBe(2);
    calls[1]?.answer.resolve(ACCEPTED);
    await settle();
    expect(calls.map((call) => call.id)).toEqual([1, 2, 3]);
    calls[0]?.answer.resolve(ACCEPTED);
    await settle();
    expect(calls.map((call) => call.id)).toEqual([1, 2, 3, 4]);
    expect(feed.pending).toBe(0);
  });

  it("offers a rejected update again, first, and moves on after a duplicate", async () => {
    const { dispatcher, calls } = scripted();
    const feed = new DispatchFeed(dispatcher, 1);
    feed.push([1, 2, 3].map((id) => privateMessage(id, id)));
    calls[0]?.answer.resolve({ status: "rejected", reason: "waiting-full" });
    await settle();
    expect(calls.map((call) => call.id)).toEqual([1]); // not at once: no spinning
    feed.poke();
    expect(calls.map((call) => call.id)).toEqual([1, 1]);
    calls[1]?.answer.resolve({ status: "duplicate" });
    await settle();
    expect(calls.map((call) => call.id)).toEqual([1, 1, 2]);
  });

  it("leaves a `closed` answer and what is not handed over to the journal", async () => {
    const { dispatcher, calls } = scripted();
    const feed = new DispatchFeed(dispatcher, 1);
    feed.push([1, 2].map((id) => privateMessage(id, id)));
    feed.stop();
    calls[0]?.answer.resolve({ status: "rejected", reason: "closed" });
    await settle();
    feed.push([privateMessage(3, 3)]);
    feed.poke();
    expect(calls.map((call) => call.id)).toEqual([1]);
    expect(feed.pending).toBe(0);
  });
});
