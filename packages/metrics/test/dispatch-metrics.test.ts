import { ManualClock } from "@telepace/core";
import { UpdateDispatcher } from "@telepace/update-dispatch";
import { describe, expect, it } from "vitest";
import { instrumentTelepace } from "../src/index.js";
import { meterHarness } from "./support/metric-reader.js";
import { message } from "./support/updates.js";

const byKind = (kind: string) => ({ "telepace.key.kind": kind });

describe("dispatcher metrics", () => {
  it("reports depth, in-flight updates, outcomes, durations and waits by key kind", async () => {
    const clock = new ManualClock();
    const { meter, collect } = meterHarness();
    const dispatcher = new UpdateDispatcher(
      async (update) => {
        const id = update.update_id;
        if (id === 1) await clock.sleep(2_000);
        if (id === 2) throw new Error("handler bug");
        if (id === 3) await clock.sleep(500);
      },
      { clock, maxQueuedPerPrincipal: 1 },
    );
    const metrics = instrumentTelepace({ meter, dispatcher });

    await dispatcher.enqueue(message(1, 10));
    await dispatcher.enqueue(message(2, 10));
    await dispatcher.enqueue(message(3, 20, -1005));
    expect(await dispatcher.enqueue(message(4, 10))).toMatchObject({ status: "rejected" });
    await clock.flush();

    let collected = await collect();
    expect(collected.value("telepace.dispatch.queue.depth", byKind("private"))).toBe(1);
    expect(collected.value("telepace.dispatch.queue.depth", byKind("group-user"))).toBe(0);
    expect(collected.value("telepace.dispatch.in_flight", byKind("private"))).toBe(1);
    expect(collected.value("telepace.dispatch.in_flight", byKind("group-user"))).toBe(1);
    expect(collected.value("telepace.dispatch.active_principals")).toBe(2);
    expect(
      collected.value("telepace.dispatch.rejected", { "telepace.reason": "principal-queue-full" }),
    ).toBe(1);

    await clock.runAll();
    collected = await collect();
    expect(collected.value("telepace.dispatch.in_flight", byKind("private"))).toBe(0);
    expect(collected.value("telepace.dispatch.queue.depth", byKind("private"))).toBe(0);
    const outcome = (kind: string, value: string) => ({
      "telepace.key.kind": kind,
      "telepace.outcome": value,
    });
    expect(collected.value("telepace.dispatch.updates", outcome("private", "succeeded"))).toBe(1);
    expect(collected.value("telepace.dispatch.updates", outcome("private", "failed"))).toBe(1);
    expect(collected.value("telepace.dispatch.updates", outcome("group-user", "succeeded"))).toBe(
      1,
    );
    expect(
      collected.histogram("telepace.dispatch.duration", outcome("private", "succeeded")),
    ).toMatchObject({ count: 1, sum: 2 });
    expect(
      collected.histogram("telepace.dispatch.duration", outcome("group-user", "succeeded")),
    ).toMatchObject({ count: 1, sum: 0.5 });
    // Update 2 waited behind update 1 of the same person.
    expect(collected.histogram("telepace.dispatch.wait", byKind("private"))).toMatchObject({
      count: 2,
      sum: 2,
      max: 2,
    });
    metrics.stop();
    await dispatcher.close();
  });
});
