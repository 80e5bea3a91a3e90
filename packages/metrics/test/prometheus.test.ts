// The Prometheus names the README promises, as @opentelemetry/exporter-prometheus writes them.

import { PrometheusSerializer } from "@opentelemetry/exporter-prometheus";
import { describe, expect, it } from "vitest";
import { instrumentTelepace } from "../src/index.js";
import { components } from "./support/components.js";
import { meterHarness } from "./support/metric-reader.js";

describe("Prometheus exposition", () => {
  it("replaces dots with underscores and gives counters a _total suffix", async () => {
    const parts = components();
    const { meter, collect } = meterHarness();
    using _metrics = instrumentTelepace({ meter, ...parts.sources, clock: parts.clock });
    await parts.work();
    const text = new PrometheusSerializer(undefined, false, undefined, true, true).serialize(
      (await collect()).resource,
    );
    const names = new Set(
      text
        .split("\n")
        .filter((line) => line.startsWith("# TYPE "))
        .map((line) => line.split(" ").slice(2).join(" ")),
    );
    for (const expected of [
      "telepace_outbox_queue_depth gauge",
      "telepace_outbox_in_flight gauge",
      "telepace_outbox_frozen_chats gauge",
      "telepace_outbox_ops_enqueued_total counter",
      "telepace_outbox_ops_coalesced_total counter",
      "telepace_outbox_rate_limited_total counter",
      "telepace_outbox_retry_after histogram",
      "telepace_outbox_queue_wait histogram",
      "telepace_intake_offset_lag gauge",
      "telepace_dispatch_in_flight gauge",
      "telepace_dispatch_duration histogram",
      "telepace_dispatch_updates_total counter",
      "telepace_media_bytes_in_flight gauge",
    ]) {
      expect(names).toContain(expected);
    }
    expect(text).toContain('telepace_outbox_queue_depth{telepace_chat_kind="private"} 0');
    expect(text).toMatch(
      /telepace_outbox_retry_after_bucket\{telepace_rate_limit_scope="chat",le="1"\} 1/,
    );
    await parts.close();
  });
});
