// Fuzzing: random paths, methods, encodings and bodies over HTTP, and random bytes on raw TCP.
// The server must answer every request with a Telegram-shaped envelope (or end a long poll when
// its clock time is up), never crash, and stay healthy afterwards.

import { connect } from "node:net";
import { ManualClock } from "@telepace/core";
import fc from "fast-check";
import { request } from "undici";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type BotApiSim, start } from "../src/index.js";
import { agent, call } from "./helpers.js";

let sim: BotApiSim;
let clock: ManualClock;
let chatId: number;
let messageId: number;

beforeAll(async () => {
  clock = new ManualClock();
  sim = await start({ clock, maxRequestBytes: 256 * 1024 });
  const user = sim.users.create();
  const chat = sim.chats.createPrivate(user);
  chatId = chat.id;
  messageId = sim.sendText(user, chat, "/start").message_id;
});
afterAll(() => sim.close({ timeoutMs: 1000 }));

const realDelay = (ms: number) =>
  new Promise<undefined>((resolve) => setTimeout(() => resolve(undefined), ms));

const METHODS = [
  "getMe",
  "getUpdates",
  "sendMessage",
  "editMessageText",
  "editMessageReplyMarkup",
  "editMessageCaption",
  "deleteMessage",
  "deleteMessages",
  "sendDocument",
  "sendPhoto",
  "getFile",
  "getChat",
  "sendChatAction",
  "answerCallbackQuery",
  "setWebhook",
  "deleteWebhook",
  "getWebhookInfo",
  "setMyCommands",
  "sendPoll",
];
const KEYS = [
  "chat_id",
  "text",
  "message_id",
  "message_ids",
  "reply_markup",
  "parse_mode",
  "entities",
  "offset",
  "limit",
  "timeout",
  "url",
  "file_id",
  "action",
  "document",
  "photo",
  "caption",
  "allowed_updates",
  "method",
  "callback_query_id",
  "reply_parameters",
  "commands",
];

const value = (): fc.Arbitrary<unknown> =>
  fc.oneof(
    {
      arbitrary: fc
        .constantFrom(
          () => chatId,
          () => messageId,
        )
        .map((get) => get()),
      weight: 4,
    },
    fc.integer({ min: -5, max: 5 }),
    fc.integer(),
    fc.double(),
    fc.string({ maxLength: 40 }),
    fc.constantFrom(
      "HTML",
      "MarkdownV2",
      "Markdown",
      "<b>x</b>",
      "*x",
      "attach://document",
      "typing",
      "-1",
      "[]",
      "{}",
    ),
    fc.jsonValue({ maxDepth: 3 }),
    fc.constant({ inline_keyboard: [[{ text: "a", callback_data: "a" }]] }),
  );

/** Mostly plausible values per parameter (so calls reach the handlers' logic), sometimes wild ones. */
const plausible: Record<string, fc.Arbitrary<unknown>> = {
  chat_id: fc.constant(null).map(() => chatId),
  text: fc.string({ minLength: 1, maxLength: 60 }),
  message_id: fc.integer({ min: 1, max: 8 }),
  message_ids: fc.array(fc.integer({ min: 1, max: 8 }), { maxLength: 4 }),
  reply_markup: fc.constant({ inline_keyboard: [[{ text: "a", callback_data: "a" }]] }),
  parse_mode: fc.constantFrom("HTML", "MarkdownV2", "Markdown"),
  offset: fc.integer({ min: -3, max: 3 }),
  limit: fc.integer({ min: -1, max: 200 }),
  timeout: fc.integer({ min: 0, max: 60 }),
  url: fc.constantFrom("https://example.org/hook", "http://x", ""),
  action: fc.constantFrom("typing", "upload_document", "nope"),
  document: fc.constantFrom("attach://document", "BQACAgIAAxkBAAAAAAAAAAAAAAAAAAAAAAAA"),
};

const extraParams = fc
  .uniqueArray(fc.constantFrom(...KEYS), { maxLength: 5 })
  .chain((keys) =>
    fc.tuple(
      ...keys.map((key) =>
        fc
          .oneof(
            { arbitrary: plausible[key] ?? value(), weight: 3 },
            { arbitrary: value(), weight: 1 },
          )
          .map((v): [string, unknown] => [key, v]),
      ),
    ),
  )
  .map((entries) => Object.fromEntries(entries) as Record<string, unknown>);

/** Usually a chat, a text and a message id (so calls get past validation), plus random extras. */
const params = fc
  .tuple(
    fc.option(plausible.chat_id as fc.Arbitrary<unknown>, { freq: 4 }),
    fc.option(plausible.text as fc.Arbitrary<unknown>, { freq: 3 }),
    fc.option(plausible.message_id as fc.Arbitrary<unknown>, { freq: 2 }),
    extraParams,
  )
  .map(([chat, text, message, extra]) => ({
    ...(chat === null ? {} : { chat_id: chat }),
    ...(text === null ? {} : { text }),
    ...(message === null ? {} : { message_id: message }),
    ...extra,
  }));

const path = fc.oneof(
  {
    arbitrary: fc
      .tuple(fc.constantFrom(...METHODS), fc.constantFrom("", "", "/"))
      .map(([method, suffix]) => ({
        kind: "bot" as const,
        build: () => `/bot${sim.token}/${method}${suffix}`,
      })),
    weight: 10,
  },
  fc.string({ maxLength: 20 }).map((method) => ({
    kind: "bot" as const,
    build: () => `/bot${sim.token}/${encodeURIComponent(method)}`,
  })),
  fc.string({ maxLength: 30 }).map((token) => ({
    kind: "bot" as const,
    build: () => `/bot${encodeURIComponent(token)}/getMe`,
  })),
  fc.string({ maxLength: 20 }).map((rest) => ({
    kind: "file" as const,
    build: () => `/file/bot${sim.token}/${encodeURIComponent(rest)}`,
  })),
  {
    arbitrary: fc
      .constantFrom(
        "/users",
        "/chats/group",
        "/messages/text",
        "/callbacks",
        "/wait/message",
        "/transcript",
        "/x",
      )
      .map((route) => ({ kind: "control" as const, build: () => `/_sim${route}` })),
    weight: 2,
  },
  fc.webPath().map((web) => ({ kind: "other" as const, build: () => web || "/" })),
);

const body = fc.oneof(
  params.map((p) => ({ type: "application/json", data: JSON.stringify(p) })),
  params.map((p) => ({
    type: "application/x-www-form-urlencoded",
    data: new URLSearchParams(
      Object.entries(p).map(([k, v]): [string, string] => [
        k,
        typeof v === "string" ? v : JSON.stringify(v),
      ]),
    ).toString(),
  })),
  fc
    .tuple(
      params,
      fc.string({ minLength: 1, maxLength: 10 }).filter((b) => !/[\r\n"]/.test(b)),
    )
    .map(([p, boundary]) => ({
      type: `multipart/form-data; boundary="${boundary}"`,
      data: [
        ...Object.entries(p).map(
          ([k, v]) =>
            `--${boundary}\r\nContent-Disposition: form-data; name="${k}"\r\n\r\n${typeof v === "string" ? v : JSON.stringify(v)}\r\n`,
        ),
        `--${boundary}\r\nContent-Disposition: form-data; name="document"; filename="f.txt"\r\n\r\nhello\r\n--${boundary}--\r\n`,
      ].join(""),
    })),
  fc
    .tuple(
      fc.constantFrom(
        "application/json",
        "multipart/form-data",
        "multipart/form-data; boundary=zz",
        "text/plain",
        "application/x-www-form-urlencoded",
      ),
      fc.string({ maxLength: 200 }),
    )
    .map(([type, data]) => ({ type, data })),
);

const httpMethod = fc.oneof(
  { arbitrary: fc.constant("POST"), weight: 12 },
  { arbitrary: fc.constant("GET"), weight: 4 },
  { arbitrary: fc.constantFrom("PUT", "DELETE", "PATCH", "HEAD", "OPTIONS"), weight: 1 },
);

async function send(
  method: string,
  url: string,
  payload: { type: string; data: string } | undefined,
): Promise<{ status: number; text: string }> {
  const withBody = payload !== undefined && method !== "GET" && method !== "HEAD";
  const response = await request(`${sim.apiRoot}${url}`, {
    method: method as "POST",
    dispatcher: agent,
    ...(withBody ? { headers: { "content-type": payload.type }, body: payload.data } : {}),
  });
  return { status: response.statusCode, text: await response.body.text() };
}

describe("HTTP fuzzing", () => {
  it("answers every random request with a well-formed envelope", async () => {
    await fc.assert(
      fc.asyncProperty(
        httpMethod,
        path,
        fc.option(body, { nil: undefined, freq: 6 }),
        params,
        async (method, target, payload, query) => {
          const queryString = new URLSearchParams(
            Object.entries(query).map(([k, v]): [string, string] => [
              k,
              typeof v === "string" ? v : JSON.stringify(v),
            ]),
          ).toString();
          const url = `${target.build()}${queryString ? `?${queryString}` : ""}`;
          const pending = send(method, url, payload);
          let reply = await Promise.race([pending, realDelay(1000)]);
          if (reply === undefined) {
            // Only a long poll may wait; it must end when its time on the simulator clock is up.
            await clock.advance(60_000);
            reply = await Promise.race([pending, realDelay(5000)]);
          }
          expect(reply).toBeDefined();
          const { status, text } = reply as { status: number; text: string };
          expect(status).toBeGreaterThanOrEqual(200);
          expect(status).toBeLessThan(600);
          if ((target.kind === "bot" || target.kind === "control") && method !== "HEAD") {
            const envelope = JSON.parse(text);
            expect(typeof envelope.ok).toBe("boolean");
            if (!envelope.ok) {
              expect(envelope.error_code).toBe(status);
              expect(typeof envelope.description).toBe("string");
            }
          }
        },
      ),
      { numRuns: 300 },
    );
    const counters = sim.counters();
    // The fuzz must reach the method handlers, not only the routing.
    expect(Object.values(counters.calls).reduce((a, b) => a + b, 0)).toBeGreaterThan(100);
    expect((await call(sim, "getMe")).body.ok).toBe(true);
  }, 60_000);
});

describe("raw TCP fuzzing", () => {
  it("closes connections that send garbage and keeps serving", async () => {
    const { port } = sim;
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(
          fc.uint8Array({ minLength: 1, maxLength: 300 }),
          fc.string({ maxLength: 200 }).map((s) => new TextEncoder().encode(`${s}\r\n\r\n`)),
          fc
            .string({ maxLength: 50 })
            .map((s) =>
              new TextEncoder().encode(`GET /bot${s} HTTP/1.1\r\nHost: x\r\n${s}\r\n\r\n`),
            ),
          fc.constant(
            new TextEncoder().encode(
              `POST /bot${"1:a"}/getMe HTTP/1.1\r\nContent-Length: 5\r\n\r\nab`,
            ),
          ),
        ),
        async (bytes) => {
          const closed = new Promise<void>((resolve) => {
            const socket = connect(port, "127.0.0.1", () => {
              socket.write(bytes);
              socket.end();
            });
            socket.on("data", () => {});
            socket.on("error", () => resolve());
            socket.on("close", () => resolve());
          });
          expect(await Promise.race([closed.then(() => true), realDelay(5000)])).toBe(true);
        },
      ),
      { numRuns: 60 },
    );
    expect((await call(sim, "getMe")).body.ok).toBe(true);
  }, 60_000);
});
