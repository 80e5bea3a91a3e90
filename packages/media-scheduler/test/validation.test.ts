// Bad input fails at once with a TypeError or RangeError that names what was wrong.

import { ManualClock } from "@telepace/core";
import { describe, expect, it } from "vitest";
import { MediaSchedulerRegistry, mediaSchedulerDefaults } from "../src/index.js";
import { MiB, UNIT } from "./helpers.js";

describe("registry options", () => {
  it("default to the seed's limits", () => {
    const registry = new MediaSchedulerRegistry();
    expect(registry.limits).toEqual({
      download: {
        maxBytesInFlight: 16 * MiB,
        maxActiveSmallTransfers: 5,
        maxActiveLargeTransfers: 2,
      },
      upload: {
        maxBytesInFlight: 8 * MiB,
        maxActiveSmallTransfers: Number.POSITIVE_INFINITY,
        maxActiveLargeTransfers: Number.POSITIVE_INFINITY,
      },
      backgroundGrantInterval: 8,
      maxQueuedAcquires: 16_384,
    });
    expect(Object.isFrozen(mediaSchedulerDefaults)).toBe(true);
    expect(Object.isFrozen(mediaSchedulerDefaults.download)).toBe(true);
  });

  it.each([
    [
      { download: { maxBytesInFlight: UNIT + 0.5 } },
      "Expected `download.maxBytesInFlight` to be an integer >= 65536, got 65536.5",
    ],
    [
      { upload: { maxBytesInFlight: "8MiB" } },
      'Expected `upload.maxBytesInFlight` to be an integer >= 65536, got "8MiB"',
    ],
    [
      { upload: { maxActiveLargeTransfers: 2.5 } },
      "Expected `upload.maxActiveLargeTransfers` to be an integer >= 1 or Infinity, got 2.5",
    ],
    [
      { backgroundGrantInterval: 0 },
      "Expected `backgroundGrantInterval` to be an integer >= 1, got 0",
    ],
    [{ maxQueuedAcquires: -5 }, "Expected `maxQueuedAcquires` to be an integer >= 1, got -5"],
    [
      { largeTransferThresholdBytes: 0 },
      "Expected `largeTransferThresholdBytes` to be an integer >= 1, got 0",
    ],
    [{ clock: {} }, "Expected `clock` to be a Clock (with now() and setTimer())"],
    [{ upload: null }, "Expected `upload` to be an object, got null"],
  ])("rejects %j", (options, message) => {
    expect(() => new MediaSchedulerRegistry(options as never)).toThrow(message);
  });

  it("says TypeError for a wrong type and RangeError for a wrong value", () => {
    expect(
      () => new MediaSchedulerRegistry({ upload: { maxBytesInFlight: "1" as never } }),
    ).toThrow(TypeError);
    expect(() => new MediaSchedulerRegistry({ upload: { maxBytesInFlight: 1 } })).toThrow(
      RangeError,
    );
    expect(() => new MediaSchedulerRegistry(5 as never)).toThrow(TypeError);
  });

  it("accepts Infinity as 'no cap' for slot limits and a custom large threshold", async () => {
    const registry = new MediaSchedulerRegistry({
      download: { maxActiveLargeTransfers: Number.POSITIVE_INFINITY },
      largeTransferThresholdBytes: MiB,
      clock: new ManualClock(),
    });
    expect(registry.open({ dc: 1, direction: "download", sizeBytes: MiB - 1 }).sizeClass).toBe(
      "small",
    );
    expect(registry.open({ dc: 1, direction: "download", sizeBytes: MiB }).sizeClass).toBe("large");
    expect(registry.limits.download.maxActiveLargeTransfers).toBe(Number.POSITIVE_INFINITY);
  });
});

describe("open and acquire arguments", () => {
  it("accept a host name as the data centre and reject malformed ones", () => {
    const registry = new MediaSchedulerRegistry();
    const open = (dc: unknown) => () => registry.open({ dc, direction: "download" } as never);
    expect(open("api.telegram.org")).not.toThrow();
    expect(open("127.0.0.1:8081")).not.toThrow();
    expect(open("")).toThrow(RangeError);
    expect(open(" api.telegram.org")).toThrow(RangeError);
    expect(open("x".repeat(256))).toThrow(RangeError);
    expect(open(Symbol("dc"))).toThrow(TypeError);
    expect(() => registry.open(undefined as never)).toThrow(
      new TypeError("Expected `options` to be an object, got undefined"),
    );
  });

  it("treat 2 and '2' as different data centres", () => {
    const registry = new MediaSchedulerRegistry();
    const number = registry.open({ dc: 2, direction: "download" });
    const string = registry.open({ dc: "2", direction: "download" });
    expect(number.scheduler).not.toBe(string.scheduler);
  });

  it("check acquire's priority", () => {
    const registry = new MediaSchedulerRegistry();
    const transfer = registry.open({ dc: 1, direction: "download" });
    expect(() => transfer.acquire(UNIT, { priority: "low" as never })).toThrow(
      new TypeError('Expected `priority` to be "foreground" or "background", got "low"'),
    );
    expect(transfer.scheduler.snapshot().queuedRequests).toBe(0);
  });

  it("check the charge against the budget of the transfer's direction", () => {
    const registry = new MediaSchedulerRegistry();
    const upload = registry.open({ dc: 1, direction: "upload" });
    const download = registry.open({ dc: 1, direction: "download" });
    expect(() => upload.acquire(8 * MiB + 1)).toThrow(
      "Expected `bytes` to be at most 8388608 (the upload budget per data centre) once rounded up to 65536, got 8388609 (charge 8454144)",
    );
    expect(() => download.acquire(8 * MiB + 1)).not.toThrow();
  });
});
