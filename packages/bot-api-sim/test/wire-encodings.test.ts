// The four encodings Telegram accepts, JSON-serialised fields as strings or objects, the method
// in any case or as a parameter, gzip bodies, and the success envelope.

import { gzipSync } from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type BotApiSim, start } from "../src/index.js";
import { call, type Encoding, raw } from "./helpers.js";

let sim: BotApiSim;

beforeAll(async () => {
  sim = await start();
});
afterAll(() => sim.close());

describe("getMe in every encoding", () => {
  it.each<Encoding>(["query", "form", "json", "multipart"])("answers over %s", async (encoding) => {
    const reply = await call(sim, "getMe", {}, { encoding });
    expect(reply.status).toBe(200);
    expect(reply.headers["content-type"]).toBe("application/json");
    expect(reply.body).toEqual({ ok: true, result: sim.bot });
    expect(reply.body.result).toMatchObject({
      id: Number(sim.token.split(":")[0]),
      is_bot: true,
      username: "telepace_sim_bot",
      can_join_groups: true,
      can_read_all_group_messages: false,
      supports_inline_queries: false,
    });
  });

  it("answers a plain GET without parameters", async () => {
    const reply = await raw(sim, `/bot${sim.token}/getMe`);
    expect(reply.body.ok).toBe(true);
  });
});

describe("parameters", () => {
  it.each<Encoding>(["query", "form", "json", "multipart"])(
    "sendMessage carries chat_id, text and reply_markup over %s",
    async (encoding) => {
      const user = sim.users.create();
      const chat = sim.chats.createPrivate(user);
      const markup = { inline_keyboard: [[{ text: "Yes", callback_data: "yes" }]] };
      const reply = await call(
        sim,
        "sendMessage",
        { chat_id: chat.id, text: `hi ${encoding}`, reply_markup: markup },
        { encoding },
      );
      expect(reply.status).toBe(200);
      expect(reply.body.result).toMatchObject({
        chat: { id: chat.id, type: "private" },
        text: `hi ${encoding}`,
        reply_markup: markup,
      });
    },
  );

  it("accepts a JSON-serialised field as a string inside a JSON body", async () => {
    const user = sim.users.create();
    const chat = sim.chats.createPrivate(user);
    const markup = { inline_keyboard: [[{ text: "A", callback_data: "a" }]] };
    const reply = await call(sim, "sendMessage", {
      chat_id: String(chat.id),
      text: "string markup",
      reply_markup: JSON.stringify(markup),
    });
    expect(reply.body.result.reply_markup).toEqual(markup);
  });

  it("reads a number sent where text is expected as its JSON text", async () => {
    const user = sim.users.create();
    const chat = sim.chats.createPrivate(user);
    const reply = await call(sim, "sendMessage", { chat_id: chat.id, text: 12345 });
    expect(reply.body.result.text).toBe("12345");
  });

  it("lets the query string win over the body for the same name", async () => {
    const user = sim.users.create();
    const chat = sim.chats.createPrivate(user);
    const reply = await raw(sim, `/bot${sim.token}/sendMessage?text=from-query`, {
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ chat_id: chat.id, text: "from-body" }),
    });
    expect(reply.body.result.text).toBe("from-query");
  });

  it("treats method names case-insensitively", async () => {
    for (const name of ["getme", "GETME", "GetMe"]) {
      expect((await call(sim, name)).body.ok).toBe(true);
    }
  });

  it("takes the method from the `method` parameter when the path has none", async () => {
    const reply = await raw(sim, `/bot${sim.token}/?method=getMe`);
    expect(reply.body).toEqual({ ok: true, result: sim.bot });
  });

  it("decodes a gzip-encoded body", async () => {
    const user = sim.users.create();
    const chat = sim.chats.createPrivate(user);
    const reply = await raw(sim, `/bot${sim.token}/sendMessage`, {
      headers: { "content-type": "application/json", "content-encoding": "gzip" },
      body: gzipSync(JSON.stringify({ chat_id: chat.id, text: "zipped" })),
    });
    expect(reply.body.result.text).toBe("zipped");
  });

  it("answers 415 for an unknown content encoding", async () => {
    const reply = await raw(sim, `/bot${sim.token}/getMe`, {
      headers: { "content-type": "application/json", "content-encoding": "br" },
      body: "{}",
    });
    expect(reply.status).toBe(415);
    expect(reply.body.description).toBe("Unsupported Media Type: unsupported content-encoding");
  });

  it("ignores a body of another content type, like the real server", async () => {
    const getMe = await raw(sim, `/bot${sim.token}/getMe`, {
      headers: { "content-type": "text/plain" },
      body: "not parameters at all",
    });
    expect(getMe.body.ok).toBe(true);
    const send = await raw(sim, `/bot${sim.token}/sendMessage`, {
      headers: { "content-type": "text/plain" },
      body: "chat_id=1&text=hi",
    });
    expect(send.status).toBe(400);
    expect(send.body.description).toBe("Bad Request: message text is empty");
  });

  it("reads a top-level JSON string as the `content` parameter", async () => {
    const reply = await raw(sim, `/bot${sim.token}/getMe`, {
      headers: { "content-type": "application/json" },
      body: '"just a string"',
    });
    expect(reply.body.ok).toBe(true);
  });

  it("treats an empty parameter as absent", async () => {
    const reply = await call(sim, "sendMessage", { chat_id: "", text: "x" }, { encoding: "form" });
    expect(reply.body.description).toBe("Bad Request: chat_id is empty");
  });

  it("reads urlencoded parts inside multipart bodies as parameters", async () => {
    const user = sim.users.create();
    const chat = sim.chats.createPrivate(user);
    const boundary = "xyz";
    const body = [
      `--${boundary}`,
      'Content-Disposition: form-data; name="params"',
      "Content-Type: application/x-www-form-urlencoded",
      "",
      `chat_id=${chat.id}&text=nested+form`,
      `--${boundary}--`,
      "",
    ].join("\r\n");
    const reply = await raw(sim, `/bot${sim.token}/sendMessage`, {
      headers: { "content-type": `multipart/form-data; boundary="${boundary}"` },
      body,
    });
    expect(reply.body.result.text).toBe("nested form");
  });
});
