import diagnosticsChannel from "node:diagnostics_channel";
import { describe, expect, it } from "vitest";
import { recordChannels } from "../src/index.js";

const names = { a: "telepace:testing-test:a", b: "telepace:testing-test:b" };
const publish = (name: string, n: number) => diagnosticsChannel.channel(name).publish({ n });

describe("recordChannels", () => {
  it("records every channel's events in publication order until stopped", () => {
    const recorder = recordChannels<{ n: number }>(names);
    publish(names.a, 1);
    publish(names.b, 2);
    recorder.stop();
    recorder.stop();
    publish(names.a, 3);
    expect(recorder.events).toEqual([{ n: 1 }, { n: 2 }]);
    expect(diagnosticsChannel.hasSubscribers(names.a)).toBe(false);
  });

  it("hands each event to onEvent as it is published, and stops with `using`", () => {
    const seen: number[] = [];
    {
      using recorder = recordChannels<{ n: number }>({ a: names.a }, (event) => {
        seen.push(event.n);
        expect(recorder.events).toHaveLength(seen.length);
      });
      publish(names.a, 1);
    }
    publish(names.a, 2);
    expect(seen).toEqual([1]);
  });
});
