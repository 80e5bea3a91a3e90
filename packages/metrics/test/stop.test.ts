import diagnosticsChannel from "node:diagnostics_channel";
import { describe, expect, it } from "vitest";
import {
  dispatchChannelNames,
  intakeChannelNames,
  mediaChannelNames,
  outboxChannelNames,
} from "../src/channels.js";
import { instrumentTelepace } from "../src/index.js";
import { components } from "./support/components.js";
import { meterHarness } from "./support/metric-reader.js";

const everyChannel = [
  outboxChannelNames,
  dispatchChannelNames,
  intakeChannelNames,
  mediaChannelNames,
].flatMap((names) => Object.values(names));

function subscribed(): string[] {
  return everyChannel.filter((name) => diagnosticsChannel.channel(name).hasSubscribers);
}

describe("stopping", () => {
  it("unsubscribes every channel and reads no snapshot afterwards", async () => {
    const parts = components();
    const { meter, collect } = meterHarness();
    const metrics = instrumentTelepace({ meter, ...parts.sources, clock: parts.clock });
    expect(subscribed().length).toBeGreaterThan(0);
    await parts.work();
    const before = await collect();
    expect(parts.snapshots.count).toBeGreaterThan(0);
    expect(before.value("telepace.outbox.ops.enqueued")).toBe(3);
    const rateLimited = { "telepace.rate_limit.scope": "chat", "telepace.chat.kind": "supergroup" };
    expect(before.value("telepace.outbox.rate_limited", rateLimited)).toBe(1);

    metrics.stop();
    metrics.stop();
    expect(subscribed()).toEqual([]);
    const reads = parts.snapshots.count;
    await parts.work();
    const after = await collect();
    expect(parts.snapshots.count).toBe(reads);
    expect(after.value("telepace.outbox.rate_limited", rateLimited)).toBe(1);
    expect(
      after.histogram("telepace.outbox.retry_after", { "telepace.rate_limit.scope": "chat" }),
    ).toMatchObject({ count: 1 });
    // The SDK keeps reporting an observable's last value; it is no longer read.
    expect(after.value("telepace.outbox.ops.enqueued")).toBe(3);
    expect(after.value("telepace.media.grants")).toBe(before.value("telepace.media.grants"));
    await parts.close();
  });

  it("stops at the end of a `using` block", async () => {
    const parts = components();
    const { meter } = meterHarness();
    {
      using _metrics = instrumentTelepace({ meter, outbox: parts.sources.outbox });
      expect(diagnosticsChannel.channel(outboxChannelNames.started).hasSubscribers).toBe(true);
    }
    expect(subscribed()).toEqual([]);
    await parts.close();
  });
});
