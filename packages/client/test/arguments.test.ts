import { outboxOptionNames } from "@telepace/outbox";
import { unhandledRejectionsOf } from "@telepace/testing";
import { describe, expect, it } from "vitest";
import { TelegramClient } from "../src/index.js";
import { apiError } from "./support/bot-server.js";
import { connect, TOKEN } from "./support/client.js";

const noChat = [undefined, null, ""] as const;

describe("TelegramClient: arguments are checked at the call site", { timeout: 20_000 }, () => {
  it("a chat method without a chat throws a TypeError naming chatId, before anything is queued", async () => {
    const { server, client } = await connect();
    const file = Buffer.from("x");
    for (const chatId of noChat) {
      const id = chatId as never;
      const calls = [
        () => client.sendMessage(id, "x"),
        () => client.editMessageText(id, 1, "x"),
        () => client.deleteMessage(id, 1),
        () => client.sendDocument(id, file),
        () => client.sendPhoto(id, file),
        () => client.sendChatAction(id, "typing"),
        () => client.write("setMessageReaction", { chat_id: id, message_id: 1 }),
      ];
      for (const call of calls) {
        expect(call).toThrow(TypeError);
        expect(call).toThrow(/`(params\.chat_id|chatId)` to be an integer or a non-empty string/);
      }
    }
    expect(() => client.sendMessage(undefined as never, "x")).toThrow(
      new TypeError("Expected `chatId` to be an integer or a non-empty string, got undefined"),
    );
    expect(() => client.write("setMessageReaction", { chat_id: "", message_id: 1 })).toThrow(
      new TypeError('Expected `params.chat_id` to be an integer or a non-empty string, got ""'),
    );
    expect(client.outbox.snapshot().counters.enqueued).toBe(0);
    expect(server.requests).toHaveLength(0);
  });

  it("per-request options are checked whole, naming the option", async () => {
    const { server, client } = await connect();
    expect(() => client.sendMessage(1, "x", {}, { timeoutMs: -1 })).toThrow(
      new RangeError("Expected `timeoutMs` to be a finite number >= 0, got -1"),
    );
    expect(() => client.editMessageText(1, 2, "x", {}, { timeoutMs: "100" as never })).toThrow(
      new TypeError('Expected `timeoutMs` to be a finite number >= 0, got "100"'),
    );
    expect(() => client.deleteMessage(1, 2, { signal: "stop" as never })).toThrow(
      new TypeError('Expected `signal` to be an AbortSignal, got "stop"'),
    );
    expect(() => client.sendMessage(1, "x", {}, { replaceMessageId: 0 })).toThrow(
      new RangeError("Expected `replaceMessageId` to be an integer >= 1, got 0"),
    );
    expect(() => client.sendMessage(1, "x", {}, { timeout: 5 } as never)).toThrow(
      new TypeError("Unknown option `timeout` in `options` (did you mean `timeoutMs`?)"),
    );
    expect(() => client.editMessageText(1, 2, "x", {}, { replaceMessageId: 3 } as never)).toThrow(
      /Unknown option `replaceMessageId`/,
    );
    expect(() => client.sendMessage(1, "x", {}, null as never)).toThrow(
      new TypeError("Expected `options` to be an object, got null"),
    );
    expect(() => client.sendMessage(1, "x", "bold" as never)).toThrow(
      new TypeError('Expected `params` to be an object, got "bold"'),
    );
    expect(() =>
      client.write("setMessageReaction", { chat_id: 1 } as never, { prio: 1 } as never),
    ).toThrow(/Unknown option `prio` in `options`/);
    expect(() =>
      client.write("setMessageReaction", { chat_id: 1 } as never, { priority: -1 }),
    ).toThrow(new RangeError("Expected `priority` to be an integer >= 0, got -1"));
    expect(() => client.answerCallbackQuery("q", {}, { timeoutMs: Number.NaN })).toThrow(
      RangeError,
    );
    expect(client.outbox.snapshot().counters.enqueued).toBe(0);
    expect(server.requests).toHaveLength(0);
  });

  it("reads and raw calls throw synchronously too", async () => {
    const { server, client } = await connect();
    expect(() => client.getMe({ timeoutMs: -1 })).toThrow(RangeError);
    expect(() => client.getMe({ signal: {} as never })).toThrow(
      new TypeError("Expected `signal` to be an AbortSignal, got an object"),
    );
    expect(() => client.getUpdates({ timeout: "30" as never })).toThrow(
      new TypeError('Expected `timeout` to be an integer >= 0, got "30"'),
    );
    expect(() => client.getUpdates(null as never)).toThrow(TypeError);
    expect(() => client.getFile("")).toThrow(
      new TypeError('Expected `fileId` to be a non-empty string, got ""'),
    );
    expect(() => client.downloadFile("a", { range: { from: 1 } } as never)).toThrow(
      /Unknown option `from` in `range`/,
    );
    expect(() => client.call("getMe", undefined, { timeoutMs: -5 })).toThrow(RangeError);
    expect(() => client.call("" as never)).toThrow(TypeError);
    expect(server.requests).toHaveLength(0);
  });

  it("`void client.editMessageText(…)` with a bad argument throws, never an unhandled rejection", async () => {
    const { client } = await connect();
    const rejections = await unhandledRejectionsOf(() => {
      expect(() => {
        void client.editMessageText(1, 2, "x", {}, { timeoutMs: -1 });
      }).toThrow(RangeError);
    });
    expect(rejections).toEqual([]);
  });

  it("a failure of the request itself stays a typed outcome", async () => {
    const { client } = await connect((_request, res) => apiError(res, 400, "Bad Request: nope"));
    expect(await client.sendMessage(1, "x", {}, { timeoutMs: 5_000 })).toMatchObject({
      status: "failed",
      error: { code: "ERR_TELEGRAM_API", errorCode: 400 },
    });
  });
});

describe("TelegramClient: the outbox's options", () => {
  it("takes every option the outbox has but the clock and logger it shares", async () => {
    const passed = outboxOptionNames.filter((name) => name !== "clock" && name !== "logger");
    expect(passed.length).toBe(outboxOptionNames.length - 2);
    for (const name of passed) {
      await new TelegramClient({ token: TOKEN, outbox: { [name]: undefined } }).close();
    }
    expect(
      () => new TelegramClient({ token: TOKEN, outbox: { nothingLikeIt: 1 } as never }),
    ).toThrow(
      new TypeError(
        `Unknown option \`nothingLikeIt\` in \`outbox\` (valid options: ${passed.join(", ")})`,
      ),
    );
  });
});

describe("TelegramClient: options are checked whole", () => {
  it.each([
    // No options at all names `options`, not the `token` inside them.
    [
      undefined,
      TypeError,
      "Expected `options` to be an object with the bot's `token`, got undefined",
    ],
    [null, TypeError, "Expected `options` to be an object with the bot's `token`, got null"],
    [{}, TypeError, "Expected `token` to be a bot token (no spaces or slashes), got undefined"],
    // A string is most likely the token passed as `new TelegramClient(token)`: never echoed.
    [
      "x",
      TypeError,
      "Expected `options` to be an object with the bot's `token`, got a string (pass `{ token }`, not the token itself)",
    ],
    [{ token: TOKEN, outbox: 5 }, TypeError, "Expected `outbox` to be an object, got 5"],
    [
      { token: TOKEN, requestTimeout: 5 },
      TypeError,
      "Unknown option `requestTimeout` in `options` (did you mean `requestTimeoutMs`?)",
    ],
    [
      { token: TOKEN, outbox: { maxInflight: 5 } },
      TypeError,
      "Unknown option `maxInflight` in `outbox` (did you mean `maxInFlight`?)",
    ],
    [
      { token: TOKEN, outbox: { clock: {} } },
      TypeError,
      "Unknown option `clock` in `outbox` (the client's own `clock` is shared with its outbox)",
    ],
    [
      { token: TOKEN, maxConnections: null },
      TypeError,
      "Expected `maxConnections` to be an integer >= 1, got null",
    ],
    [
      { token: TOKEN, requestTimeoutMs: null },
      TypeError,
      "Expected `requestTimeoutMs` to be a finite number >= 0, got null",
    ],
    [
      { token: TOKEN, outbox: { maxInFlight: null } },
      TypeError,
      "Expected `maxInFlight` to be a number, got null",
    ],
    [
      { token: TOKEN, outbox: { classifyFailure: null } },
      TypeError,
      "Expected `classifyFailure` to be a function, got null",
    ],
    [
      { token: TOKEN, outbox: { pacingStore: null } },
      TypeError,
      "Expected `pacingStore` to be an object with `acquire`, `freeze`, got null",
    ],
    [
      { token: TOKEN, logger: { info() {} } },
      TypeError,
      "Expected `logger` to be an object with `debug`, `info`, `warn`, `error`, got an object without `debug`, `warn`, `error`",
    ],
    [
      { token: TOKEN, clock: 5 },
      TypeError,
      "Expected `clock` to be an object with `now`, `setTimer`, `sleep`, got 5",
    ],
    [
      { token: TOKEN, apiRoot: null },
      TypeError,
      "Expected `apiRoot` to be an http(s) URL, got null",
    ],
  ])("rejects %o", (options, type, message) => {
    expect(() => new TelegramClient(options as never)).toThrow(new type(message));
  });
});
