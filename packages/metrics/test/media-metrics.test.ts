import { ManualClock } from "@telepace/core";
import { MediaSchedulerRegistry, mediaChargeUnitBytes } from "@telepace/media-scheduler";
import { describe, expect, it } from "vitest";
import { instrumentTelepace } from "../src/index.js";
import { meterHarness } from "./support/metric-reader.js";

const UNIT = mediaChargeUnitBytes;
const at = (dc: string, direction: string) => ({
  "telepace.media.dc": dc,
  "telepace.media.direction": direction,
});

describe("media scheduler metrics", () => {
  it("reports bytes in flight, queued and allowed per data centre and direction", async () => {
    const clock = new ManualClock();
    const { meter, collect } = meterHarness();
    const registry = new MediaSchedulerRegistry({
      clock,
      download: { maxBytesInFlight: 4 * UNIT },
      upload: { maxBytesInFlight: 8 * UNIT },
    });
    const metrics = instrumentTelepace({ meter, mediaRegistry: registry });
    const photo = registry.open({ dc: "api.telegram.org", direction: "download", sizeBytes: UNIT });
    const video = registry.open({ dc: "api.telegram.org", direction: "download", sizeBytes: UNIT });
    const upload = registry.open({ dc: 2, direction: "upload", sizeBytes: 3 * UNIT });
    const held = await photo.acquire(3 * UNIT);
    const sent = await upload.acquire(3 * UNIT - 100);
    const waiting = video.acquire(2 * UNIT, { priority: "background" });

    let collected = await collect();
    expect(
      collected.value("telepace.media.bytes.in_flight", at("api.telegram.org", "download")),
    ).toBe(3 * UNIT);
    expect(collected.value("telepace.media.bytes.queued", at("api.telegram.org", "download"))).toBe(
      2 * UNIT,
    );
    expect(collected.value("telepace.media.bytes.limit", at("api.telegram.org", "download"))).toBe(
      4 * UNIT,
    );
    expect(
      collected.value("telepace.media.requests.queued", at("api.telegram.org", "download")),
    ).toBe(1);
    expect(collected.value("telepace.media.bytes.in_flight", at("2", "upload"))).toBe(3 * UNIT);
    expect(collected.value("telepace.media.transfers.active", at("2", "upload"))).toBe(1);
    expect(collected.value("telepace.media.transfers.open")).toBe(3);
    expect(collected.value("telepace.media.grants")).toBe(2);

    await clock.advance(1_200);
    held.release();
    const granted = await waiting;
    collected = await collect();
    expect(
      collected.value("telepace.media.bytes.in_flight", at("api.telegram.org", "download")),
    ).toBe(2 * UNIT);
    expect(
      collected.histogram("telepace.media.permit.wait", {
        "telepace.media.direction": "download",
        "telepace.media.priority": "background",
      }),
    ).toMatchObject({ count: 1, sum: 1.2 });
    expect(
      collected.histogram("telepace.media.permit.wait", {
        "telepace.media.direction": "download",
        "telepace.media.priority": "foreground",
      }),
    ).toMatchObject({ count: 1, sum: 0 });
    expect(
      collected.value("telepace.media.bytes.granted", { "telepace.media.direction": "download" }),
    ).toBe(5 * UNIT);
    expect(
      collected.value("telepace.media.bytes.granted", { "telepace.media.direction": "upload" }),
    ).toBe(3 * UNIT);

    granted.release();
    sent.release();
    metrics.stop();
    await registry.close();
  });
});
