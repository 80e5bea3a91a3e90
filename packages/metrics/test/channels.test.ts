import diagnosticsChannel from "node:diagnostics_channel";
import { broadcastChannels } from "@telepace/broadcast";
import { mediaSchedulerChannels } from "@telepace/media-scheduler";
import { outboxChannels } from "@telepace/outbox";
import { updateDispatchChannels, updateIntakeChannels } from "@telepace/update-dispatch";
import { describe, expect, it } from "vitest";
import {
  broadcastChannelNames,
  dispatchChannelNames,
  intakeChannelNames,
  mediaChannelNames,
  outboxChannelNames,
  subscribeEvents,
} from "../src/channels.js";

describe("channel names", () => {
  it("equal the names each package publishes on", () => {
    expect(outboxChannelNames).toEqual(outboxChannels);
    expect(dispatchChannelNames).toEqual(updateDispatchChannels);
    expect(intakeChannelNames).toEqual(updateIntakeChannels);
    expect(mediaChannelNames).toEqual(mediaSchedulerChannels);
    expect(broadcastChannelNames).toEqual(broadcastChannels);
  });

  it("subscribes only the handled events, and unsubscribes them all once", () => {
    type Event = { type: "a"; n: number } | { type: "b" };
    const names = { a: "telepace:metrics-test:a", b: "telepace:metrics-test:b" };
    const seen: number[] = [];
    const unsubscribe = subscribeEvents<Event>(names, { a: (event) => seen.push(event.n) });
    expect(diagnosticsChannel.channel(names.a).hasSubscribers).toBe(true);
    expect(diagnosticsChannel.channel(names.b).hasSubscribers).toBe(false);
    diagnosticsChannel.channel(names.a).publish({ type: "a", n: 1 });
    unsubscribe();
    unsubscribe();
    diagnosticsChannel.channel(names.a).publish({ type: "a", n: 2 });
    expect(seen).toEqual([1]);
    expect(diagnosticsChannel.channel(names.a).hasSubscribers).toBe(false);
  });
});
