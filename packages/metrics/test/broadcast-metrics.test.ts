import { BroadcastRegistry, MemoryBroadcastStore } from "@telepace/broadcast";
import { ManualClock } from "@telepace/core";
import { ForbiddenError, TelegramOutbox } from "@telepace/outbox";
import { describe, expect, it } from "vitest";
import { type BroadcastRegistrySource, instrumentTelepace } from "../src/index.js";
import { meterHarness } from "./support/metric-reader.js";

describe("broadcast metrics", () => {
  it("report what is left, the pace and the sends of a running broadcast, and outcomes by kind", async () => {
    const clock = new ManualClock();
    const outbox = new TelegramOutbox({ clock, pacingMarginMs: 0 });
    const registry = new BroadcastRegistry({
      outbox,
      clock,
      store: new MemoryBroadcastStore(),
      transport: async (method, params) => {
        await clock.sleep(5);
        if (params.chat_id === 7) {
          throw new ForbiddenError({
            method,
            errorCode: 403,
            description: "Forbidden: bot was blocked by the user",
          });
        }
        return true;
      },
    });
    // The real registry fits the source type as it is.
    const fits: BroadcastRegistrySource = registry;
    expect(Object.isFrozen(fits.snapshot())).toBe(true);
    const { meter, collect } = meterHarness();
    const metrics = instrumentTelepace({ meter, broadcasts: registry });
    const job = registry.start("news", {
      message: { method: "sendMessage", params: { text: "hi" } },
      recipients: Array.from({ length: 90 }, (_, index) => index + 1),
    });
    await clock.advance(1_500);
    const during = await collect();
    const id = { "telepace.broadcast.id": "news", "telepace.broadcast.mode": "free" };
    const left = during.value("telepace.broadcast.remaining", id) as number;
    expect(left).toBeGreaterThan(0);
    expect(left).toBeLessThan(90);
    expect(during.value("telepace.broadcast.rate", id)).toBeGreaterThan(10);
    expect(during.value("telepace.broadcast.eta", id)).toBeGreaterThan(0);
    expect(during.value("telepace.broadcast.sends.queued", id)).toBeGreaterThanOrEqual(0);
    while (job.state !== "completed") await clock.advance(100);
    const after = await collect();
    const sent = { "telepace.broadcast.id": "news", "telepace.outcome": "sent" };
    const blocked = { "telepace.broadcast.id": "news", "telepace.outcome": "blocked" };
    expect(after.value("telepace.broadcast.recipients", sent)).toBe(89);
    expect(after.value("telepace.broadcast.recipients", blocked)).toBe(1);
    metrics.stop();
  });
});
