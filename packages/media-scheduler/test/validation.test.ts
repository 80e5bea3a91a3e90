// Bad input fails at once with a TypeError or RangeError that names what was wrong.

import { ManualClock } from "@telepace/core";
import { describe, expect, it } from "vitest";
import { MediaSchedulerRegistry, mediaSchedulerDefaults } from "../src/index.js";
import { MiB, UNIT } from "./helpers.js";

describe("registry options", () => {
  it("default to the seed's budgets, no download slot caps, large downloads at most 4 MiB", () => {
    const registry = new MediaSchedulerRegistry();
    expect(registry.limits).toEqual({
      download: {
        maxBytesInFlight: 16 * MiB,
        maxActiveSmallTransfers: Number.POSITIVE_INFINITY,
        maxActiveLargeTransfers: Number.POSITIVE_INFINITY,
        maxLargeBytesInFlight: 4 * MiB,
      },
      upload: {
        maxBytesInFlight: 8 * MiB,
        maxActiveSmallTransfers: Number.POSITIVE_INFINITY,
        maxActiveLargeTransfers: Number.POSITIVE_INFINITY,
        maxLargeBytesInFlight: Number.POSITIVE_INFINITY,
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
    [
      { clock: {} },
      "Expected `clock` to be an object with `now`, `setTimer`, `sleep`, got an object without `now`, `setTimer`, `sleep`",
    ],
    [{ upload: null }, "Expected `upload` to be an object, got null"],
  ])("rejects %j", (options, message) => {
    expect(() => new MediaSchedulerRegistry(options as never)).toThrow(message);
  });

  it.each([
    [
      { maxBytesInflight: 1 },
      "Unknown option `maxBytesInflight` in `options` (did you mean `download.maxBytesInFlight` or `upload.maxBytesInFlight`?)",
    ],
    [{ downloads: {} }, "Unknown option `downloads` in `options` (did you mean `download`?)"],
    [
      { download: { maxBytesInflight: 1 } },
      "Unknown option `maxBytesInflight` in `download` (did you mean `maxBytesInFlight`?)",
    ],
    [
      { upload: { maxActiveSmallTransfer: 1 } },
      "Unknown option `maxActiveSmallTransfer` in `upload` (did you mean `maxActiveSmallTransfers`?)",
    ],
    [{ logg: undefined }, "Unknown option `logg` in `options` (did you mean `logger`?)"],
  ])("rejects the unknown key in %j, naming the closest valid one", (options, message) => {
    expect(() => new MediaSchedulerRegistry(options as never)).toThrow(new TypeError(message));
  });

  it("checks configure() whole, the same way, and changes nothing on a bad update", () => {
    const registry = new MediaSchedulerRegistry();
    const before = registry.limits;
    expect(() =>
      registry.configure({
        download: { maxBytesInFlight: 2 * MiB },
        backgroundGrantIntervall: 2,
      } as never),
    ).toThrow(
      new TypeError(
        "Unknown option `backgroundGrantIntervall` in `limits` (did you mean `backgroundGrantInterval`?)",
      ),
    );
    expect(() => registry.configure({ upload: { maxBytesInFlite: MiB } } as never)).toThrow(
      new TypeError(
        "Unknown option `maxBytesInFlite` in `upload` (did you mean `maxBytesInFlight`?)",
      ),
    );
    expect(() => registry.configure({ largeTransferThresholdBytes: MiB } as never)).toThrow(
      TypeError,
    );
    expect(() => registry.configure(undefined as never)).toThrow(
      new TypeError("Expected `limits` to be an object, got undefined"),
    );
    expect(registry.limits).toBe(before);
  });

  it.each([
    [
      { backgroundGrantInterval: null },
      "Expected `backgroundGrantInterval` to be an integer >= 1, got null",
    ],
    [
      { largeTransferThresholdBytes: null },
      "Expected `largeTransferThresholdBytes` to be an integer >= 1, got null",
    ],
    [
      { download: { maxBytesInFlight: null } },
      "Expected `download.maxBytesInFlight` to be an integer >= 65536, got null",
    ],
    [
      { upload: { maxActiveSmallTransfers: null } },
      "Expected `upload.maxActiveSmallTransfers` to be an integer >= 1 or Infinity, got null",
    ],
  ])("rejects null for a number in %j", (options, message) => {
    expect(() => new MediaSchedulerRegistry(options as never)).toThrow(new TypeError(message));
  });

  it("takes `undefined` for every optional option (exactOptionalPropertyTypes)", () => {
    const registry = new MediaSchedulerRegistry({
      download: { maxBytesInFlight: undefined, maxActiveSmallTransfers: undefined },
      upload: undefined,
      backgroundGrantInterval: undefined,
      maxQueuedAcquires: undefined,
      largeTransferThresholdBytes: undefined,
      clock: undefined,
      logger: undefined,
    });
    expect(registry.limits.download.maxBytesInFlight).toBe(16 * MiB);
    registry.configure({ download: undefined, backgroundGrantInterval: undefined });
    const transfer = registry.open({
      dc: 1,
      direction: "upload",
      sizeBytes: undefined,
      priority: undefined,
    });
    expect(() => transfer.acquire(UNIT, { signal: undefined, priority: undefined })).not.toThrow();
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
    expect(registry.size).toBe(2);
    expect([number.schedulerSnapshot().dc, string.schedulerSnapshot().dc]).toEqual([2, "2"]);
  });

  it("check acquire's priority", () => {
    const registry = new MediaSchedulerRegistry();
    const transfer = registry.open({ dc: 1, direction: "download" });
    expect(() => transfer.acquire(UNIT, { priority: "low" as never })).toThrow(
      new TypeError('Expected `priority` to be "foreground" or "background", got "low"'),
    );
    expect(transfer.schedulerSnapshot().queuedRequests).toBe(0);
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
