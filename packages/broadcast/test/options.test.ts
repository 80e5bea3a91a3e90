// Options are checked whole, at the call: not an object, a wrong type or range, an unknown key
// (naming the closest valid one), a message that is not a send or carries what the broadcast owns.

import { ManualClock } from "@telepace/core";
import { TelegramOutbox } from "@telepace/outbox";
import { describe, expect, it } from "vitest";
import { BroadcastRegistry, broadcastDefaults, MemoryBroadcastStore } from "../src/index.js";

const transport = async () => true;
const registry = () =>
  new BroadcastRegistry({ outbox: new TelegramOutbox({ clock: new ManualClock() }), transport });
const message = { method: "sendMessage", params: { text: "hi" } } as const;

describe("BroadcastRegistry options", () => {
  it("need a client, or an outbox and a transport, and nothing unknown", () => {
    expect(() => new BroadcastRegistry(undefined as never)).toThrow(TypeError);
    expect(() => new BroadcastRegistry({ transport } as never)).toThrow(
      "Expected `client`, or `outbox` (a TelegramOutbox) and `transport`",
    );
    expect(
      () => new BroadcastRegistry({ outbox: new TelegramOutbox(), transport, stor: 1 } as never),
    ).toThrow("Unknown option `stor` in `options` (did you mean `store`?)");
    expect(
      () =>
        new BroadcastRegistry({
          client: { outbox: new TelegramOutbox(), call: transport },
          transport,
        } as never),
    ).toThrow("Expected `client`, or `outbox` and `transport`, not both");
    expect(
      () => new BroadcastRegistry({ outbox: new TelegramOutbox(), transport, store: {} } as never),
    ).toThrow(/^Expected `store` to be an object with `open`/);
    expect(
      () =>
        new BroadcastRegistry({
          outbox: new TelegramOutbox(),
          transport,
          store: new MemoryBroadcastStore(),
          workerId: "",
        }),
    ).toThrow("Expected `workerId` to be a non-empty string");
  });
});

describe("start options", () => {
  it("are checked before anything starts", () => {
    const r = registry();
    const start =
      (options: unknown, id = "x") =>
      () =>
        r.start(id, options as never);
    expect(start({ message, recipients: [1], reciepients: [] })).toThrow(
      "Unknown option `reciepients` in `options` (did you mean `recipients`?)",
    );
    expect(start({ message, recipients: [1] }, "has space")).toThrow(/^Expected `id` to be 1–128/);
    expect(start({ message: { method: "getMe", params: {} }, recipients: [1] })).toThrow(
      /^Expected `message.method` to be a send method/,
    );
    expect(start({ message: { method: "sendMesage", params: {} }, recipients: [1] })).toThrow(
      /\(did you mean `sendMessage`\?\)$/,
    );
    expect(
      start({ message: { method: "sendMessage", params: { chat_id: 1 } }, recipients: [1] }),
    ).toThrow("Expected `message.params` without `chat_id`: the broadcast adds each recipient's");
    expect(
      start({
        message: { method: "sendMessage", params: { allow_paid_broadcast: true } },
        recipients: [1],
      }),
    ).toThrow(/without `allow_paid_broadcast`: set the broadcast's `paid` option instead$/);
    expect(
      start({
        message: { method: "sendPhoto", params: { photo: new Uint8Array(1) } },
        recipients: [1],
      }),
    ).toThrow(/^Expected `message.params.photo` to be JSON/);
    expect(start({ message: { ...message, extra: 1 }, recipients: [1] })).toThrow(
      /^Unknown option `extra` in `message`/,
    );
    expect(start({ message, recipients: 42 })).toThrow(/^Expected `recipients` to be an array/);
    expect(start({ message, recipients: [1], batchSize: 0 })).toThrow(
      new RangeError("Expected `batchSize` to be an integer >= 1 and <= 10000, got 0"),
    );
    expect(start({ message, recipients: [1], leaseMs: 10 })).toThrow(RangeError);
    expect(start({ message, recipients: [1], maxPerSecond: 0 })).toThrow(RangeError);
    expect(start({ message, recipients: [1], paid: "yes" })).toThrow(TypeError);
    expect(start({ message, recipients: [1], signal: {} })).toThrow(TypeError);
    expect(r.snapshot().broadcasts).toEqual([]);
  });

  it("have documented defaults", () => {
    expect(broadcastDefaults).toMatchObject({
      priority: 3,
      batchSize: 100,
      maxPerSecond: 30,
      maxQueuedFree: 60,
      maxQueuedPaid: 500,
      leaseMs: 30_000,
      resendInFlight: true,
      maxConsecutiveFailures: 20,
    });
    expect(Object.isFrozen(broadcastDefaults)).toBe(true);
  });

  it("refuses a one-shot iterable with a store several processes share", () => {
    const outbox = new TelegramOutbox({ clock: new ManualClock() });
    const shared = Object.assign(new MemoryBroadcastStore(), { isShared: true });
    const r = new BroadcastRegistry({ outbox, transport, store: shared });
    expect(() => r.start("x", { message, recipients: new Set([1, 2]) })).toThrow(
      /^Expected `recipients` to be an array or a function \(from\) => iterable: several processes share this store/,
    );
  });

  it("refuses to start after close", async () => {
    const r = registry();
    await r.close();
    expect(() => r.start("x", { message, recipients: [1] })).toThrow(
      expect.objectContaining({ code: "ERR_BROADCAST_CLOSED" }),
    );
  });
});
