// Every error the wire can produce before a method runs: tokens, paths, methods, HTTP verbs,
// malformed JSON and multipart bodies, oversize bodies, unknown and non-integer chat ids.

import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type BotApiSim, start } from "../src/index.js";
import { call, raw } from "./helpers.js";

let sim: BotApiSim;

beforeAll(async () => {
  sim = await start({ maxRequestBytes: 64 * 1024 });
});
afterAll(() => sim.close());

function expectEnvelope(
  reply: { status: number; body: unknown },
  status: number,
  description: string,
): void {
  expect(reply.status).toBe(status);
  expect(reply.body).toEqual({ ok: false, error_code: status, description });
}

describe("tokens", () => {
  it.each([
    ["no colon", "123456"],
    ["a leading zero", "0123:abc"],
    ["a non-numeric bot id", "abc:def"],
    ["an empty bot id", ":secret"],
    ["a bot id above 2^54", `${2 ** 54 + 10}:abc`],
    ["more than 80 characters", `1:${"a".repeat(80)}`],
  ])("answers 401 invalid token for %s", async (_label, token) => {
    expectEnvelope(
      await call(sim, "getMe", {}, { token }),
      401,
      "Unauthorized: invalid token specified",
    );
  });

  it("answers 401 Unauthorized for a well-formed token it does not know", async () => {
    expectEnvelope(
      await call(sim, "getMe", {}, { token: "123456:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA" }),
      401,
      "Unauthorized",
    );
  });

  it("never echoes a token in an error", async () => {
    const token = "987654:SECRETSECRETSECRETSECRETSECRETSECR";
    const reply = await call(sim, "getMe", {}, { token });
    expect(reply.text).not.toContain("SECRET");
  });
});

describe("paths and methods", () => {
  it("answers 404 method not found for an unknown method", async () => {
    expectEnvelope(await call(sim, "sendTelepathy"), 404, "Not Found: method not found");
  });

  it("answers 404 method not found when no method is given at all", async () => {
    expectEnvelope(await raw(sim, `/bot${sim.token}/`), 404, "Not Found: method not found");
  });

  it("answers 404 Not Found for paths outside /bot (and the chat page at /)", async () => {
    expectEnvelope(await raw(sim, "/api/getMe"), 404, "Not Found");
    expectEnvelope(await raw(sim, "/index.html"), 404, "Not Found");
  });

  it("answers a clear 400 for a real method the simulator does not implement", async () => {
    const reply = await call(sim, "sendPoll", { chat_id: 1, question: "?" });
    expect(reply.status).toBe(400);
    expect(reply.body.description).toBe(
      "Bad Request: method sendPoll is not implemented by the simulator (@telepace/bot-api-sim)",
    );
  });

  it("answers 501 for HTTP verbs other than GET and POST", async () => {
    expectEnvelope(
      await raw(sim, `/bot${sim.token}/getMe`, { method: "PUT", body: "{}" }),
      501,
      "Not Implemented",
    );
    expectEnvelope(
      await raw(sim, `/bot${sim.token}/getMe`, { method: "DELETE" }),
      501,
      "Not Implemented",
    );
  });
});

describe("missing and invalid parameters", () => {
  it("sendMessage without text: 400 message text is empty", async () => {
    const user = sim.users.create();
    const chat = sim.chats.createPrivate(user);
    expectEnvelope(
      await call(sim, "sendMessage", { chat_id: chat.id }),
      400,
      "Bad Request: message text is empty",
    );
  });

  it("sendMessage with only whitespace: 400 message text is empty", async () => {
    const user = sim.users.create();
    const chat = sim.chats.createPrivate(user);
    expectEnvelope(
      await call(sim, "sendMessage", { chat_id: chat.id, text: " \n\t " }),
      400,
      "Bad Request: message text is empty",
    );
  });

  it("sendMessage without chat_id: 400 chat_id is empty", async () => {
    expectEnvelope(
      await call(sim, "sendMessage", { text: "hi" }),
      400,
      "Bad Request: chat_id is empty",
    );
  });

  it.each([["999999"], ["-42"], ["-1001234567890"], ["@nobody"], ["12abc"], ["1.5"], ["abc"]])(
    "unknown or non-integer chat_id %s: 400 chat not found",
    async (chatId) => {
      expectEnvelope(
        await call(sim, "sendMessage", { chat_id: chatId, text: "hi" }),
        400,
        "Bad Request: chat not found",
      );
    },
  );

  it("a user who never opened the chat: 403 bot can't initiate conversation", async () => {
    const user = sim.users.create();
    expectEnvelope(
      await call(sim, "sendMessage", { chat_id: user.id, text: "hi" }),
      403,
      "Forbidden: bot can't initiate conversation with a user",
    );
  });

  it("unsupported parse_mode: 400", async () => {
    const user = sim.users.create();
    const chat = sim.chats.createPrivate(user);
    expectEnvelope(
      await call(sim, "sendMessage", { chat_id: chat.id, text: "hi", parse_mode: "BBCode" }),
      400,
      "Bad Request: unsupported parse_mode",
    );
  });

  it("malformed reply_markup: Telegram's texts", async () => {
    const user = sim.users.create();
    const chat = sim.chats.createPrivate(user);
    const send = (reply_markup: unknown) =>
      call(sim, "sendMessage", { chat_id: chat.id, text: "x", reply_markup });
    expectEnvelope(
      await send("{not json"),
      400,
      "Bad Request: can't parse reply keyboard markup JSON object",
    );
    expectEnvelope(await send("[1]"), 400, "Bad Request: object expected as reply markup");
    expectEnvelope(
      await send({ inline_keyboard: "no" }),
      400,
      'Bad Request: field "inline_keyboard" of the InlineKeyboardMarkup must be an Array',
    );
    expectEnvelope(
      await send({ inline_keyboard: [["x"]] }),
      400,
      "Bad Request: can't parse inline keyboard button: InlineKeyboardButton must be an Object",
    );
    expectEnvelope(
      await send({ inline_keyboard: [[{ text: "plain" }]] }),
      400,
      "Bad Request: can't parse inline keyboard button: Text buttons are unallowed in the inline keyboard",
    );
    expectEnvelope(
      await send({ inline_keyboard: [[{ text: "big", callback_data: "x".repeat(65) }]] }),
      400,
      "Bad Request: BUTTON_DATA_INVALID",
    );
  });

  it("garbage integers read as 0, like the real server (limit is clamped, not rejected)", async () => {
    const reply = await call(sim, "getUpdates", { limit: "lots", offset: "-1" });
    expect(reply.body.ok).toBe(true);
  });
});

describe("malformed bodies", () => {
  const post = (body: string, type = "application/json") =>
    raw(sim, `/bot${sim.token}/getMe`, { headers: { "content-type": type }, body });

  it.each([
    ["[1,2]", "Bad Request: JSON object expected"],
    ["42", "Bad Request: JSON object expected"],
    ['{"a":1} trailing', "Bad Request: unexpected data after object end"],
    ["{", "Bad Request: expected parameter name"],
    ['{"a" 1}', "Bad Request: can't parse object, ':' expected"],
    ['{"a":1 "b":2}', "Bad Request: expected next field or object end"],
    ['"unterminated', "Bad Request: can't parse string content: unterminated string"],
    ['"x" y', "Bad Request: extra data after string"],
  ])("JSON %s: 400 %s", async (body, description) => {
    expectEnvelope(await post(body), 400, description);
  });

  it("names the problem in a parameter value", async () => {
    const reply = await post('{"a":tru}');
    expect(reply.status).toBe(400);
    expect(reply.body.description).toMatch(/^Bad Request: can't parse parameter value: /);
  });

  it("multipart without a boundary: 400 boundary not found", async () => {
    expectEnvelope(
      await post("--x\r\n", "multipart/form-data"),
      400,
      "Bad Request: boundary not found",
    );
  });

  it("multipart with an empty boundary: 400", async () => {
    expectEnvelope(
      await post("--x\r\n", "multipart/form-data; boundary="),
      400,
      "Bad Request: boundary too big or empty",
    );
  });

  it("multipart part without a name: 400", async () => {
    const body = '--b\r\nContent-Disposition: form-data; filename="a"\r\n\r\nx\r\n--b--\r\n';
    expectEnvelope(
      await post(body, "multipart/form-data; boundary=b"),
      400,
      "Bad Request: field name in multipart/form-data not found",
    );
  });

  it("multipart part with empty headers: 400", async () => {
    expectEnvelope(
      await post("--b\r\n\r\nx\r\n--b--\r\n", "multipart/form-data; boundary=b"),
      400,
      "Bad Request: headers in multipart/form-data are empty",
    );
  });

  it("multipart part that is not form-data: 400", async () => {
    const body = '--b\r\nContent-Disposition: attachment; name="a"\r\n\r\nx\r\n--b--\r\n';
    expectEnvelope(
      await post(body, "multipart/form-data; boundary=b"),
      400,
      "Bad Request: expected form-data content disposition",
    );
  });

  it("oversize body: 413 and the connection is closed", async () => {
    const reply = await post(JSON.stringify({ text: "x".repeat(70 * 1024) }));
    expect(reply.status).toBe(413);
    expect(reply.body).toEqual({
      ok: false,
      error_code: 413,
      description: "Request Entity Too Large",
    });
    expect(reply.headers.connection).toBe("close");
    expect((await call(sim, "getMe")).body.ok).toBe(true);
  });

  it("broken gzip: 400", async () => {
    const reply = await raw(sim, `/bot${sim.token}/getMe`, {
      headers: { "content-type": "application/json", "content-encoding": "gzip" },
      body: "definitely not gzip",
    });
    expect(reply.status).toBe(400);
    expect(reply.body.description).toMatch(/^Bad Request: /);
  });
});
