// The chat page over HTTP: the page and its files with their security headers, stored files for
// the page, requests on behalf of other sites refused, binding beyond loopback only when asked
// (with a warning), and the bot token in nothing the page can fetch.

import { once } from "node:events";
import { request } from "undici";
import { afterEach, describe, expect, it } from "vitest";
import { CONTROL_ROUTES } from "../src/control/control-routes.js";
import { type BotApiSim, start } from "../src/index.js";
import {
  ASSETS_PREFIX,
  CONTROL_PREFIX,
  DOWNLOADS_PREFIX,
  EVENTS_PATH,
} from "../src/server/http-server.js";
import { pageAssets } from "../src/ui/page-assets.js";
import { createPageRoutes } from "../src/ui/page-routes.js";
import { agent, call, control, PNG_1X1, raw } from "./helpers.js";

let sim: BotApiSim;

afterEach(() => sim?.close());

describe("the page", () => {
  it("serves the page at / and its files under /_sim/assets/ with a strict policy", async () => {
    sim = await start();
    const page = await raw(sim, "/");
    expect(page.status).toBe(200);
    expect(page.headers["content-type"]).toBe("text/html; charset=utf-8");
    expect(page.headers["content-security-policy"]).toContain("script-src 'self'");
    expect(page.headers["content-security-policy"]).toContain("frame-ancestors 'none'");
    expect(page.headers["x-content-type-options"]).toBe("nosniff");
    expect(page.text).toContain('<script type="module" src="/_sim/assets/app.js"></script>');
    const names = [...pageAssets().keys()];
    expect(names).toEqual(
      expect.arrayContaining(["index.html", "app.js", "layout.css", "chat.css", "panel.css"]),
    );
    for (const name of names) {
      const asset = await raw(sim, `/_sim/assets/${name}`);
      expect(asset.status, name).toBe(200);
      expect(asset.headers["content-type"]).toBe(pageAssets().get(name)?.contentType);
    }
    // Every file the page links and every module it imports is served.
    for (const [, linked] of page.text.matchAll(/(?:href|src)="\/_sim\/assets\/([^"]+)"/g)) {
      expect(names, `index.html links ${linked}`).toContain(linked);
    }
    for (const name of names.filter((file) => file.endsWith(".js"))) {
      const text = (await raw(sim, `/_sim/assets/${name}`)).text;
      for (const [, imported] of text.matchAll(/from "\.\/([^"]+)"/g)) {
        expect(names, `${name} imports ${imported}`).toContain(imported);
      }
    }
  });

  it("answers 404 for a file that is not the page's, 405 for other methods, 200 for HEAD", async () => {
    sim = await start();
    expect((await raw(sim, "/_sim/assets/../package.json")).status).toBe(404);
    expect((await raw(sim, "/_sim/assets/%2e%2e%2fpage-assets.ts")).status).toBe(404);
    expect((await raw(sim, "/_sim/assets/nope.js")).status).toBe(404);
    expect((await raw(sim, "/", { method: "POST", body: "x" })).status).toBe(405);
    expect((await raw(sim, "/_sim/events", { method: "HEAD" })).status).toBe(405);
    const head = await request(`${sim.apiRoot}/`, { method: "HEAD", dispatcher: agent });
    expect(head.statusCode).toBe(200);
    expect(await head.body.text()).toBe("");
    // The Bot API's own 404 stays where it was.
    expect((await raw(sim, "/api/getMe")).body.description).toBe("Not Found");
  });

  it("serves stored files by file_id: photos inline, documents as attachments", async () => {
    sim = await start();
    const user = sim.users.create({ firstName: "Ann" });
    const chat = sim.chats.createPrivate(user);
    const html = sim.sendDocument(user, chat, {
      bytes: Buffer.from("<script>alert(1)</script>"),
      fileName: "évil page.html",
    });
    const photo = sim.sendPhoto(user, chat, { bytes: PNG_1X1 });
    const document = await raw(sim, `/_sim/downloads/${html.document?.file_id}`);
    expect(document.status).toBe(200);
    expect(document.text).toBe("<script>alert(1)</script>");
    expect(document.headers["content-type"]).toBe("application/octet-stream");
    expect(document.headers["content-disposition"]).toBe(
      "attachment; filename*=UTF-8''%C3%A9vil%20page.html",
    );
    expect(document.headers["content-security-policy"]).toContain("sandbox");
    const image = await request(`${sim.apiRoot}/_sim/downloads/${photo.photo?.[0]?.file_id}`, {
      dispatcher: agent,
    });
    expect(image.statusCode).toBe(200);
    expect(image.headers["content-type"]).toBe("image/png");
    expect(Buffer.from(await image.body.arrayBuffer())).toEqual(PNG_1X1);
    expect((await raw(sim, "/_sim/downloads/BQACAgIAAxkBAAnope")).status).toBe(404);
  });
});

describe("paths", () => {
  it("keeps the page's paths clear of every control route", () => {
    const routes = [...CONTROL_ROUTES.keys(), ...createPageRoutes({} as never).keys()];
    for (const key of routes) {
      const path = `${CONTROL_PREFIX}${key.split(" ")[1]}`;
      expect(path === EVENTS_PATH, key).toBe(false);
      expect(path.startsWith(ASSETS_PREFIX) || path.startsWith(DOWNLOADS_PREFIX), key).toBe(false);
    }
  });
});

describe("requests on behalf of other sites", () => {
  it("refuses a foreign Origin or a non-loopback Host on the page and the control API", async () => {
    sim = await start();
    const foreign = { origin: "http://evil.example" };
    for (const path of ["/", "/_sim/events", "/_sim/state", "/_sim/page/chats"]) {
      const reply = await raw(sim, path, { headers: foreign });
      expect(reply.status, path).toBe(403);
      expect(reply.body.description).toBe("Forbidden: a request on behalf of another site");
    }
    const post = await raw(sim, "/_sim/users", {
      headers: { ...foreign, "content-type": "text/plain" },
      body: JSON.stringify({ first_name: "Mallory" }),
    });
    expect(post.status).toBe(403);
    expect(sim.users.count).toBe(0);
    // A DNS-rebound name reaches the loopback port with its own Host.
    const rebound = await raw(sim, "/_sim/state", {
      headers: { host: `rebind.example:${sim.port}` },
    });
    expect(rebound.status).toBe(403);
    // The page's own requests carry its own origin; the Bot API is not guarded.
    const own = await raw(sim, "/_sim/users", {
      headers: { origin: sim.apiRoot, host: `127.0.0.1:${sim.port}` },
      body: "{}",
    });
    expect(own.status).toBe(200);
    expect(
      (await raw(sim, "/_sim/state", { headers: { host: `localhost:${sim.port}` } })).status,
    ).toBe(200);
    expect((await call(sim, "getMe")).status).toBe(200);
  });
});

describe("binding beyond loopback", () => {
  it("needs allowNonLoopback, warns, and then takes any Host", async () => {
    await expect(start({ host: "0.0.0.0" })).rejects.toThrow("unless `allowNonLoopback` is true");
    const warned = once(process, "warning") as Promise<[Error & { code?: string }]>;
    sim = await start({ host: "0.0.0.0", allowNonLoopback: true });
    const [warning] = await warned;
    expect(warning.code).toBe("TELEPACE_SIM_NOT_LOOPBACK");
    expect(warning.message).toContain("0.0.0.0");
    expect(warning.message).toContain("no authentication");
    const reply = await request(`http://127.0.0.1:${sim.port}/_sim/state`, {
      dispatcher: agent,
      headers: { host: `sim.lan:${sim.port}` },
    });
    expect(reply.statusCode).toBe(200);
    await reply.body.dump();
  });
});

describe("the token", () => {
  it("is in no page file, page route or event the page can receive", async () => {
    sim = await start();
    const user = sim.users.create({ firstName: "Tess" });
    const chat = sim.chats.createPrivate(user);
    const group = sim.chats.createGroup({ title: "T", members: [user] });
    const stream = await request(`${sim.apiRoot}/_sim/events`, { dispatcher: agent });
    const chunks: string[] = [];
    stream.body.on("data", (chunk: Buffer) => chunks.push(chunk.toString()));
    const hello = sim.sendText(user, chat, "hello");
    const sent = await call(sim, "sendMessage", {
      chat_id: chat.id,
      text: "hi",
      reply_markup: { inline_keyboard: [[{ text: "b", callback_data: "b" }]] },
    });
    const query = sim.pressButton(user, chat, sent.body.result.message_id, "b");
    await call(sim, "answerCallbackQuery", { callback_query_id: query.id, text: "ok" });
    await call(sim, "sendMessageDraft", { chat_id: chat.id, draft_id: 1, text: "…" });
    sim.faults.failNext("sendMessage", 1, { code: 502 });
    await call(sim, "sendMessage", { chat_id: chat.id, text: "lost" });
    for (let i = 0; i < 4; i++) await call(sim, "sendMessage", { chat_id: chat.id, text: `${i}` });
    const bodies = [(await raw(sim, "/")).text];
    for (const name of pageAssets().keys())
      bodies.push((await raw(sim, `/_sim/assets/${name}`)).text);
    for (const path of [
      "",
      "/state",
      "/page/chats",
      "/page/users",
      `/page/chat?chat_id=${chat.id}`,
      `/page/chat?chat_id=${group.id}`,
      `/page/panel?chat_id=${chat.id}`,
      `/budget?chat_id=${chat.id}`,
      `/keyboard?chat_id=${chat.id}&user_id=${user.id}`,
      "/faults",
    ]) {
      const reply = await control(sim, path);
      expect(reply.status, path).toBe(200);
      bodies.push(reply.text);
    }
    const ended = once(stream.body, "end");
    await sim.close();
    await ended;
    const events = chunks.join("");
    expect(events).toContain('"text":"hello"');
    expect(events).toContain("event: callback_answer");
    expect(events).toContain("event: rate_limited");
    expect(events).toContain("event: fault");
    expect(hello.message_id).toBeGreaterThan(0);
    for (const body of [...bodies, events]) {
      expect(body).not.toContain(sim.token);
      expect(body).not.toContain(sim.token.split(":")[1]);
    }
  });
});
