import { describe, expect, it } from "vitest";
import { instrumentTelepace } from "../src/index.js";
import { components, TOKEN } from "./support/components.js";
import { meterHarness } from "./support/metric-reader.js";
import { SECRET_TEXT } from "./support/updates.js";

describe("attributes", () => {
  it("carry no token, text or name: only kinds, outcomes, ids and data centres", async () => {
    const parts = components();
    const { meter, collect } = meterHarness();
    using _metrics = instrumentTelepace({
      meter,
      ...parts.sources,
      clock: parts.clock,
      maxPerChatSeries: 10,
    });
    await parts.work();
    const collected = await collect();

    const keys = new Set<string>();
    for (const metric of collected.metrics.values()) {
      expect(metric.descriptor.name).toMatch(/^telepace\.[a-z_.]+$/);
      for (const point of metric.dataPoints) {
        for (const key of Object.keys(point.attributes)) keys.add(key);
      }
    }
    for (const key of keys) expect(key).toMatch(/^telepace\.[a-z_.]+$/);
    const values = collected.attributeValues();
    expect(values.length).toBeGreaterThan(50);
    for (const value of values) {
      expect(value).not.toContain(TOKEN.split(":")[1]);
      expect(value).not.toContain(SECRET_TEXT);
      expect(value).not.toContain("Ada");
      expect(value).not.toContain("Secret club");
      expect(value).toMatch(/^(-?\d+|@public_club|[a-z][a-z.-]*)$/);
    }
    await parts.close();
  });
});
