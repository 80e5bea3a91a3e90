// The seed's five scenarios, one by one.

import { describe, expect, it } from "vitest";
import { dispatchKeyOf } from "../src/dispatcher/dispatch-key.js";
import { UpdateDispatcher } from "../src/index.js";
import { editedPrivateMessage, futureUpdate, pollUpdate, privateMessage } from "./fixtures.js";
import { recorder, settle } from "./harness.js";

describe("seed scenarios", () => {
  it("principals overlap while each principal stays ordered: [2, 1, 3]", async () => {
    const rec = recorder();
    const dispatcher = new UpdateDispatcher(rec.processor);
    const gate = rec.gate(1);
    await dispatcher.enqueue(privateMessage(1, 42));
    await settle();
    expect(rec.started).toEqual([1]);

    await dispatcher.enqueue(privateMessage(3, 42));
    await dispatcher.enqueue(privateMessage(2, 77));
    await settle();
    // User 77 is not held up by user 42's blocked update; user 42's next one waits its turn.
    expect(rec.finished).toEqual([2]);
    expect(rec.started).toEqual([1, 2]);

    gate.resolve();
    await dispatcher.drain();
    expect(rec.finished).toEqual([2, 1, 3]);
  });

  it("a failing update stays local: the next update of the same key still runs", async () => {
    const seen: number[] = [];
    const dispatcher = new UpdateDispatcher(async (update) => {
      seen.push(update.update_id);
      if (update.update_id === 1) throw new Error("boom");
    });
    await dispatcher.enqueue(privateMessage(1, 42));
    await dispatcher.enqueue(privateMessage(2, 42));
    await dispatcher.drain();
    expect(seen).toEqual([1, 2]);
    expect(dispatcher.snapshot()).toMatchObject({ failed: 1, succeeded: 1 });
  });

  it("a drained key is removed before a successor starts, and the successor is processed", async () => {
    const rec = recorder();
    const dispatcher = new UpdateDispatcher(rec.processor);
    await dispatcher.enqueue(privateMessage(1, 42));
    await dispatcher.drain();
    expect(dispatcher.snapshot().activePrincipals).toBe(0);

    const result = await dispatcher.enqueue(privateMessage(2, 42));
    expect(result).toEqual({ status: "accepted", keyKind: "private" });
    expect(dispatcher.snapshot().activePrincipals).toBe(1);
    await dispatcher.drain();
    expect(rec.finished).toEqual([1, 2]);
    expect(dispatcher.snapshot().activePrincipals).toBe(0);
  });

  it("edits share their source's queue; another user's edit does not", async () => {
    expect(dispatchKeyOf(editedPrivateMessage(2, 42))).toEqual(
      dispatchKeyOf(privateMessage(1, 42)),
    );
    expect(dispatchKeyOf(editedPrivateMessage(3, 77))).not.toEqual(
      dispatchKeyOf(privateMessage(1, 42)),
    );

    const rec = recorder();
    const dispatcher = new UpdateDispatcher(rec.processor);
    const gate = rec.gate(1);
    await dispatcher.enqueue(privateMessage(1, 42));
    await dispatcher.enqueue(editedPrivateMessage(2, 42));
    await dispatcher.enqueue(editedPrivateMessage(3, 77));
    await settle();
    expect(rec.started).toEqual([1, 3]);
    gate.resolve();
    await dispatcher.drain();
    expect(rec.started).toEqual([1, 3, 2]);
  });

  it("unkeyed updates share one Other key", async () => {
    expect(dispatchKeyOf(pollUpdate(1))).toEqual(dispatchKeyOf(futureUpdate(2)));
    expect(dispatchKeyOf(pollUpdate(1)).kind).toBe("other");

    const rec = recorder();
    const dispatcher = new UpdateDispatcher(rec.processor);
    const gate = rec.gate(1);
    expect(await dispatcher.enqueue(pollUpdate(1))).toEqual({
      status: "accepted",
      keyKind: "other",
    });
    expect(await dispatcher.enqueue(futureUpdate(2))).toEqual({
      status: "accepted",
      keyKind: "other",
    });
    await settle();
    expect(rec.started).toEqual([1]);
    expect(dispatcher.snapshot().activePrincipals).toBe(1);
    gate.resolve();
    await dispatcher.drain();
    expect(rec.finished).toEqual([1, 2]);
  });
});
