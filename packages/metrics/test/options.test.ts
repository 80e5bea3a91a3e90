import { TelegramOutbox } from "@telepace/outbox";
import { describe, expect, it } from "vitest";
import { instrumentTelepace, telepaceMetricsDefaults } from "../src/index.js";
import { meterHarness } from "./support/metric-reader.js";

describe("options", () => {
  const { meter } = meterHarness();
  const outbox = new TelegramOutbox();
  const call = (options: unknown) => () =>
    instrumentTelepace(options as Parameters<typeof instrumentTelepace>[0]);

  it("are checked whole, naming the option", () => {
    expect(call(undefined)).toThrow(
      new TypeError("Expected `options` to be an object, got undefined"),
    );
    expect(call({ outbox })).toThrow(
      new TypeError("Expected `meter` to be an OpenTelemetry Meter, got undefined"),
    );
    expect(call({ meter: {}, outbox })).toThrow(
      /Expected `meter` to be an object with `createCounter`/,
    );
    expect(call({ meter, outbx: outbox })).toThrow(
      new TypeError("Unknown option `outbx` in `options` (did you mean `outbox`?)"),
    );
    expect(call({ meter })).toThrow(
      new TypeError(
        "Expected at least one of `outbox`, `intake`, `dispatcher`, `mediaRegistry`, `sharedWorker`, `sharedQueue` or `broadcasts` to instrument",
      ),
    );
    expect(call({ meter, intake: {} })).toThrow(
      new TypeError(
        "Expected `intake` to be an object with `snapshot`, got an object without `snapshot`",
      ),
    );
    expect(call({ meter, outbox, maxPerChatSeries: 1001 })).toThrow(
      new RangeError("Expected `maxPerChatSeries` to be an integer >= 0 and <= 1000, got 1001"),
    );
    expect(call({ meter, outbox, maxTrackedWaits: -1 })).toThrow(RangeError);
    expect(call({ meter, outbox, clock: { now: () => 0 } })).toThrow(/Expected `clock`/);
  });

  it("have frozen defaults", () => {
    expect(telepaceMetricsDefaults).toEqual({ maxPerChatSeries: 0, maxTrackedWaits: 10_000 });
    expect(Object.isFrozen(telepaceMetricsDefaults)).toBe(true);
  });
});
