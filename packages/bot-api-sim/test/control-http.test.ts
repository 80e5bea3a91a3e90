// The HTTP mirror of the control API under /_sim: the same operations as the programmatic API,
// in the Bot API envelope, with clear errors for bad input.

import { eventually } from "@telepace/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CONTROL_ROUTES } from "../src/control/control-routes.js";
import { type BotApiSim, start } from "../src/index.js";
import { call, control, PNG_1X1, raw } from "./helpers.js";

let sim: BotApiSim;

beforeAll(async () => {
  sim = await start({ rateLimits: false });
});
afterAll(() => sim.close());

async function result(path: string, body?: Record<string, unknown>) {
  const reply = await control(sim, path, body);
  expect(reply.body.ok).toBe(true);
  return reply.body.result;
}

describe("control over HTTP", () => {
  it("describes the simulator without revealing tokens", async () => {
    const info = await result("/");
    expect(info.api_root).toBe(sim.apiRoot);
    expect(info.bots).toEqual([sim.bot]);
    expect(info.implemented_methods).toContain("sendMessage");
    expect(JSON.stringify(info)).not.toContain(sim.token);
  });

  it("creates users and chats and plays a conversation the bot can poll", async () => {
    const user = await result("/users", { first_name: "Http", username: "http_user" });
    expect(user).toMatchObject({ first_name: "Http", username: "http_user", is_bot: false });
    const chat = await result("/chats/private", { user_id: user.id });
    expect(chat).toEqual({
      id: user.id,
      type: "private",
      first_name: "Http",
      username: "http_user",
    });
    const polling = call(sim, "getUpdates", { timeout: 20, offset: -1 });
    await eventually("the bot is polling", () => sim.snapshot().bots[0]?.isPolling === true);
    const sent = await result("/messages/command", {
      user_id: user.id,
      chat_id: chat.id,
      command: "start",
    });
    expect(sent.text).toBe("/start");
    const updates = (await polling).body.result;
    expect(updates.at(-1).message.text).toBe("/start");
    const waiting = result("/wait/message", {
      chat_id: chat.id,
      text_contains: "hello",
      timeout_ms: 5000,
    });
    await call(sim, "sendMessage", { chat_id: chat.id, text: "hello from the bot" });
    expect(await waiting).toMatchObject({ text: "hello from the bot" });
    const transcript = await result(`/transcript?chat_id=${chat.id}`);
    expect(
      transcript.events.map((e: { kind: string; actor: string }) => `${e.actor}:${e.kind}`),
    ).toEqual(["user:send", "bot:send"]);
  });

  it("groups, members, migration and bots", async () => {
    const [a, b] = [await result("/users", {}), await result("/users", {})];
    const group = await result("/chats/group", { title: "HTTP group", member_ids: [a.id] });
    expect(group).toMatchObject({ type: "group", title: "HTTP group" });
    await result("/chats/members/add", { chat_id: group.id, user_id: b.id, by_id: a.id });
    await result("/chats/bots/admin", { chat_id: group.id, is_admin: true });
    const supergroup = await result("/chats/migrate", { chat_id: group.id });
    expect(supergroup.type).toBe("supergroup");
    await result("/chats/members/remove", { chat_id: supergroup.id, user_id: b.id });
    await result("/chats/bots/remove", { chat_id: supergroup.id, ban: true });
    const refused = await call(sim, "sendMessage", { chat_id: supergroup.id, text: "x" });
    expect(refused.body.description).toBe("Forbidden: bot was kicked from the supergroup chat");
    await result("/chats/bots/add", { chat_id: supergroup.id, by_id: a.id });
    expect((await call(sim, "sendMessage", { chat_id: supergroup.id, text: "x" })).status).toBe(
      200,
    );
  });

  it("documents, photos, edits, buttons, blocking", async () => {
    const user = await result("/users", {});
    const chat = await result("/chats/private", { user_id: user.id });
    const doc = await result("/messages/document", {
      user_id: user.id,
      chat_id: chat.id,
      content_base64: Buffer.from("hello").toString("base64"),
      file_name: "h.txt",
    });
    expect(doc.document).toMatchObject({ file_name: "h.txt", file_size: 5 });
    const photo = await result("/messages/photo", {
      user_id: user.id,
      chat_id: chat.id,
      content_base64: PNG_1X1.toString("base64"),
      caption: "pic",
    });
    expect(photo.photo[0]).toMatchObject({ width: 1, height: 1 });
    const text = await result("/messages/text", {
      user_id: user.id,
      chat_id: chat.id,
      text: "old",
    });
    expect(
      (
        await result("/messages/edit", {
          user_id: user.id,
          chat_id: chat.id,
          message_id: text.message_id,
          text: "new",
        })
      ).text,
    ).toBe("new");
    const markup = { inline_keyboard: [[{ text: "B", callback_data: "b" }]] };
    const botMessage = (
      await call(sim, "sendMessage", { chat_id: chat.id, text: "press", reply_markup: markup })
    ).body.result;
    const query = await result("/callbacks", {
      user_id: user.id,
      chat_id: chat.id,
      message_id: botMessage.message_id,
      data: "b",
    });
    expect(await result(`/callbacks/answer?callback_query_id=${query.id}`)).toBeNull();
    await call(sim, "answerCallbackQuery", { callback_query_id: query.id, text: "ok" });
    expect(await result(`/callbacks/answer?callback_query_id=${query.id}`)).toMatchObject({
      text: "ok",
    });
    await result("/users/block", { user_id: user.id });
    expect((await call(sim, "sendMessage", { chat_id: chat.id, text: "x" })).status).toBe(403);
    await result("/users/unblock", { user_id: user.id });
    expect((await call(sim, "sendMessage", { chat_id: chat.id, text: "x" })).status).toBe(200);
  });

  it("faults, limits and range switches", async () => {
    expect(await result("/faults", { method: "getMe", kind: "fail", code: 502, count: 2 })).toEqual(
      { getme: 2 },
    );
    expect((await call(sim, "getMe")).status).toBe(502);
    await result("/faults/clear", {});
    expect((await call(sim, "getMe")).status).toBe(200);
    await result("/faults", { method: "getMe", kind: "reset" });
    await expect(call(sim, "getMe")).rejects.toThrow();
    await result("/faults/error-rate", { rate: 0 });
    await result("/faults/latency", { ms: 0 });
    expect(await result("/rate-limits", { per_chat_burst: 2 })).toMatchObject({ perChatBurst: 2 });
    expect(await result("/rate-limits", { enabled: false })).toBe(false);
    expect(await result("/files/range", { enabled: false })).toBe(false);
    expect(await result("/files/range", { enabled: true })).toBe(true);
    expect((await result("/state")).rangeRequests).toBe(true);
    expect((await result("/counters")).calls.getMe).toBeGreaterThan(0);
  });

  it("restarts a bot's update ids, refusing while updates are pending", async () => {
    const own = await start({ rateLimits: false });
    try {
      const user = own.users.create();
      const chat = own.chats.createPrivate(user);
      expect((await control(own, "/updates/restart-ids", { next_update_id: 5 })).body).toEqual({
        ok: true,
        result: true,
      });
      own.sendText(user, chat, "hello");
      expect((await call(own, "getUpdates")).body.result[0].update_id).toBe(5);
      const refused = await control(own, "/updates/restart-ids", { next_update_id: 1 });
      expect(refused.status).toBe(400);
      expect(refused.body.code).toBe("ERR_INVALID_STATE");
    } finally {
      await own.close();
    }
  });

  it("answers clear errors: unknown route 404, bad input 400, unknown ids 404, timeouts 408", async () => {
    expect((await control(sim, "/nope")).body).toEqual({
      ok: false,
      error_code: 404,
      description: "Not Found: no such control route",
    });
    expect((await control(sim, "/users")).status).toBe(404);
    const badJson = await raw(sim, "/_sim/users", {
      headers: { "content-type": "application/json" },
      body: "{oops",
    });
    expect(badJson.body).toEqual({
      ok: false,
      error_code: 400,
      description: "TypeError: Expected the control request body to be a JSON object",
    });
    const missing = await control(sim, "/messages/text", { chat_id: 1, text: "x" });
    expect(missing.status).toBe(400);
    expect(missing.body.description).toBe(
      "TypeError: Expected `user_id` to be an integer, got undefined",
    );
    const unknownUser = await control(sim, "/messages/text", { user_id: 5, chat_id: 1, text: "x" });
    expect(unknownUser.status).toBe(404);
    expect(unknownUser.body.code).toBe("ERR_UNKNOWN_USER");
    const user = await result("/users", {});
    const chat = await result("/chats/private", { user_id: user.id });
    const timeout = await control(sim, "/wait/message", { chat_id: chat.id, timeout_ms: 10 });
    expect(timeout.status).toBe(408);
    expect(timeout.body.code).toBe("ERR_WAIT_TIMEOUT");
    const kind = await control(sim, "/faults", { method: "getMe", kind: "explode" });
    expect(kind.body.description).toBe(
      'RangeError: Expected `kind` to be "fail", "reset" or "malformed", got "explode"',
    );
  });
});

describe("control request fields", () => {
  it("refuses an unknown field, naming the closest one, and changes nothing", async () => {
    const users = sim.snapshot().users;
    const reply = await control(sim, "/users", { frist_name: "Typo" });
    expect(reply.status).toBe(400);
    expect(reply.body.description).toBe(
      "TypeError: Unknown option `frist_name` in `request` (did you mean `first_name`?)",
    );
    expect(sim.snapshot().users).toBe(users);
    const limits = await control(sim, "/rate-limits", { per_chat_burts: 9 });
    expect(limits.body.description).toContain("did you mean `per_chat_burst`?");
  });

  it("every route reads only the fields it declares", async () => {
    const own = await start({ rateLimits: false });
    try {
      for (const [key, route] of CONTROL_ROUTES) {
        const [method, path] = key.split(" ") as [string, string];
        const nulls = Object.fromEntries(route.fields.map((field) => [field, null]));
        const reply =
          method === "GET"
            ? await control(
                own,
                `${path}?${new URLSearchParams(route.fields.map((f): [string, string] => [f, ""]))}`,
              )
            : await control(own, path, nulls);
        expect([key, reply.status]).not.toEqual([key, 500]);
      }
    } finally {
      await own.close();
    }
  });
});
