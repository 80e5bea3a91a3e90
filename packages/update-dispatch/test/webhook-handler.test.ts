// webhookHandler's answers, request by request, through the node:http adapter on a real server
// and the Fetch adapter on real Request objects: 405, 401 (body unread), 400, 413 (rest unread),
// 200 only once the journal holds the update, 503 with Retry-After, 500; and its options.

import { once } from "node:events";
import { createServer, request as httpRequest, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { createDeferred, ManualClock } from "@telepace/core";
import { spyLogger } from "@telepace/testing";
import { afterEach, describe, expect, it } from "vitest";
import {
  type AppendResult,
  MemoryUpdateJournal,
  UpdateIntake,
  type WebhookHandler,
  type WebhookHandlerOptions,
  webhookHandler,
  webhookHandlerDefaults,
} from "../src/index.js";
import { privateMessage } from "./fixtures.js";
import { recorder } from "./harness.js";
import { until } from "./intake-harness.js";

const SECRET = "s3cr3t-Token_value";
const HEADER = "X-Telegram-Bot-Api-Secret-Token";

interface Answer {
  readonly status: number;
  readonly headers: Record<string, string | string[] | undefined>;
  readonly body: string;
}

const cleanups: Array<() => Promise<unknown> | unknown> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** An intake (memory journal, recording processor) with a handler served on loopback. */
async function serve(
  options: WebhookHandlerOptions = {},
  intakeOptions: ConstructorParameters<typeof UpdateIntake>[1] = {},
) {
  const rec = recorder();
  const journal = new MemoryUpdateJournal();
  const intake = new UpdateIntake(rec.processor, { journal, ...intakeOptions });
  const webhook = webhookHandler(intake, { secretToken: SECRET, ...options });
  const server: Server = createServer(webhook.node);
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  cleanups.push(() => intake.close({ timeoutMs: 0 }));
  cleanups.push(() => {
    server.closeAllConnections();
    server.close();
  });
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  return { rec, journal, intake, webhook, url };
}

/** One request over real HTTP; `body` may be sent in parts with the request left open. */
function post(
  url: string,
  options: {
    readonly method?: string;
    readonly headers?: Record<string, string>;
    readonly body?: string;
    /** Write this many bytes of filler and leave the request open (never end it). */
    readonly openEndedBytes?: number;
  } = {},
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      url,
      {
        method: options.method ?? "POST",
        headers: { "Content-Type": "application/json", ...options.headers },
      },
      (res: IncomingMessage) => {
        const chunks: Buffer[] = [];
        res.on("data", (chunk: Buffer) => chunks.push(chunk));
        res.on("end", () => {
          resolve({
            status: res.statusCode ?? 0,
            headers: res.headers,
            body: Buffer.concat(chunks).toString("utf8"),
          });
          req.destroy();
        });
      },
    );
    req.on("error", reject);
    if (options.openEndedBytes !== undefined) {
      req.write("x".repeat(options.openEndedBytes));
      return; // never ended: the answer must come without the rest
    }
    req.end(options.body);
  });
}

const update = (id: number, user = 1) => JSON.stringify(privateMessage(id, user));
const authorized = { [HEADER]: SECRET };

describe("webhookHandler over node:http", () => {
  it("answers 200 with an empty body once stored, 200 again for a redelivery, and runs it once", async () => {
    const { url, rec, webhook } = await serve();
    const first = await post(url, { headers: authorized, body: update(1) });
    expect(first).toMatchObject({ status: 200, body: "" });
    expect(await post(url, { headers: authorized, body: update(1) })).toMatchObject({
      status: 200,
    });
    await until(() => rec.finished.length === 1);
    expect(rec.started).toEqual([1]);
    expect(webhook.snapshot().answered).toMatchObject({ stored: 1, duplicate: 1 });
  });

  it("answers 200 only after the journal says the update is durable", async () => {
    const gate = createDeferred<void>();
    let appendStarted = false;
    const journal = new MemoryUpdateJournal();
    const append = journal.append.bind(journal);
    journal.append = async (updates): Promise<AppendResult> => {
      appendStarted = true;
      await gate.promise; // a durable write still in progress
      return append(updates);
    };
    const { url, rec } = await serve({}, { journal });
    let answered: Answer | undefined;
    const pending = post(url, { headers: authorized, body: update(1) }).then((answer) => {
      answered = answer;
      return answer;
    });
    await until(() => appendStarted);
    for (let turn = 0; turn < 20; turn++) await new ManualClock().flush();
    expect(answered).toBeUndefined();
    expect(rec.started).toEqual([]);
    gate.resolve();
    expect((await pending).status).toBe(200);
    expect((await journal.unfinished()).length + rec.finished.length).toBeGreaterThanOrEqual(1);
  });

  it("refuses a wrong or missing secret token with 401, without reading the body", async () => {
    const logger = spyLogger();
    const { url, rec, webhook } = await serve({ logger });
    const missing = await post(url, { body: update(1) });
    expect(missing.status).toBe(401);
    const wrong = await post(url, {
      headers: { [HEADER]: `${SECRET.slice(0, -1)}X` },
      body: update(2),
    });
    expect(wrong.status).toBe(401);
    expect((await post(url, { headers: { [HEADER]: "short" }, body: update(3) })).status).toBe(401);
    // The answer comes while the body is still arriving.
    const unread = await post(url, {
      headers: { [HEADER]: "nope", "Content-Length": "100000" },
      openEndedBytes: 10,
    });
    expect(unread.status).toBe(401);
    expect(rec.started).toEqual([]);
    expect(webhook.snapshot().answered.unauthorized).toBe(4);
    expect(logger.text()).not.toContain(SECRET);
    expect(logger.text()).not.toContain("nope");
    expect(logger.calls[0]).toMatchObject({
      level: "warn",
      fields: { status: 401, outcome: "unauthorized" },
    });
  });

  it("takes every request when no secretToken is set", async () => {
    const rec = recorder();
    const intake = new UpdateIntake(rec.processor);
    cleanups.push(() => intake.close({ timeoutMs: 0 }));
    const webhook = webhookHandler(intake);
    const answer = await webhook.handle({
      method: "POST",
      secretToken: undefined,
      body: { bytes: update(5) },
    });
    expect(answer.status).toBe(200);
  });

  it("answers 405 with Allow: POST to any other method", async () => {
    const { url } = await serve();
    const answer = await post(url, { method: "GET", headers: authorized });
    expect(answer.status).toBe(405);
    expect(answer.headers.allow).toBe("POST");
  });

  it("answers 400, never 500, to a body that is not JSON or not an update, and never echoes it", async () => {
    const { url, rec } = await serve();
    for (const body of ["{not json", "", '"text"', "[1,2]", "{}", '{"update_id":"7"}', "null"]) {
      const answer = await post(url, { headers: authorized, body });
      expect(answer.status, body).toBe(400);
      if (body.length > 0) expect(answer.body).not.toContain(body);
    }
    expect(rec.started).toEqual([]);
  });

  it("answers 413 to a body over maxBodyBytes, by Content-Length or while reading, and stops reading", async () => {
    const { url, webhook } = await serve({ maxBodyBytes: 2048 });
    const declared = await post(url, { headers: authorized, body: "x".repeat(2049) });
    expect(declared.status).toBe(413);
    // Chunked, no length: cut off after the cap while the client is still sending.
    const streamed = await post(url, {
      headers: { ...authorized, "Transfer-Encoding": "chunked" },
      openEndedBytes: 4096,
    });
    expect(streamed.status).toBe(413);
    expect(streamed.headers.connection).toBe("close");
    expect(webhook.snapshot().answered["too-large"]).toBe(2);
    const fits = JSON.stringify({ ...privateMessage(9, 1), pad: "y".repeat(1500) });
    expect((await post(url, { headers: authorized, body: fits })).status).toBe(200);
  });

  it("answers 503 with Retry-After at maxUnfinished, then 200 once there is room", async () => {
    const { url, rec } = await serve({ retryAfterSeconds: 7 }, { maxUnfinished: 1 });
    const gate = rec.gate(1);
    expect((await post(url, { headers: authorized, body: update(1) })).status).toBe(200);
    const busy = await post(url, { headers: authorized, body: update(2, 2) });
    expect(busy.status).toBe(503);
    expect(busy.headers["retry-after"]).toBe("7");
    gate.resolve();
    await until(() => rec.finished.length === 1);
    expect((await post(url, { headers: authorized, body: update(2, 2) })).status).toBe(200);
  });

  it("answers 503 with Retry-After when the journal is slower than timeoutMs; the retry is a 200", async () => {
    const clock = new ManualClock();
    const gate = createDeferred<void>();
    let appends = 0;
    const journal = new MemoryUpdateJournal();
    const append = journal.append.bind(journal);
    journal.append = async (updates): Promise<AppendResult> => {
      appends++;
      await gate.promise;
      return append(updates);
    };
    const { url, rec } = await serve({ clock, timeoutMs: 5000 }, { journal, clock });
    const slow = post(url, { headers: authorized, body: update(1) });
    await until(() => appends === 1);
    await clock.advance(4999);
    await clock.advance(1);
    const answer = await slow;
    expect(answer.status).toBe(503);
    expect(answer.headers["retry-after"]).toBe("1");
    gate.resolve();
    await until(() => rec.started.length === 1);
    // Telegram sends it again: stored meanwhile, so a duplicate, 200, and it ran once.
    expect((await post(url, { headers: authorized, body: update(1) })).status).toBe(200);
    expect(rec.started).toEqual([1]);
  });

  it("answers 503 without Retry-After while the intake closes, and 500 when the journal fails", async () => {
    const { url, intake } = await serve();
    await intake.close({ timeoutMs: 0 });
    const closed = await post(url, { headers: authorized, body: update(1) });
    expect(closed.status).toBe(503);
    expect(closed.headers["retry-after"]).toBeUndefined();

    const logger = spyLogger();
    const journal = new MemoryUpdateJournal();
    journal.append = () =>
      Promise.reject(Object.assign(new Error(`disk full at /data/${SECRET}`), { code: "ENOSPC" }));
    const failing = await serve({ logger }, { journal });
    const failed = await post(failing.url, { headers: authorized, body: update(1) });
    expect(failed.status).toBe(500);
    expect(logger.calls.at(-1)).toMatchObject({
      level: "error",
      fields: { status: 500, outcome: "journal-failed", errorName: "Error", errorCode: "ENOSPC" },
    });
    expect(logger.text()).not.toContain(SECRET);
    expect(logger.text()).not.toContain("disk full");
  });
});

describe("webhookHandler over the Fetch API", () => {
  async function fetchSetup(options: WebhookHandlerOptions = {}) {
    const rec = recorder();
    const intake = new UpdateIntake(rec.processor);
    cleanups.push(() => intake.close({ timeoutMs: 0 }));
    return { rec, webhook: webhookHandler(intake, { secretToken: SECRET, ...options }) };
  }
  const request = (body: string | null, headers: Record<string, string> = authorized) =>
    new Request("http://localhost/hook", { method: "POST", headers, body });

  it("maps every case to Telegram's status", async () => {
    const { webhook, rec } = await fetchSetup({ maxBodyBytes: 2048 });
    expect((await webhook.fetch(request(update(1)))).status).toBe(200);
    expect(await (await webhook.fetch(request(update(1)))).text()).toBe("");
    expect((await webhook.fetch(request(update(2), {}))).status).toBe(401);
    expect((await webhook.fetch(new Request("http://localhost/hook"))).status).toBe(405);
    expect((await webhook.fetch(request("{"))).status).toBe(400);
    expect((await webhook.fetch(request('{"message":{}}'))).status).toBe(400);
    expect((await webhook.fetch(request("z".repeat(4096)))).status).toBe(413);
    await until(() => rec.finished.length === 1);
    expect(rec.started).toEqual([1]);
  });

  it("cancels a streamed body past maxBodyBytes instead of reading it to the end", async () => {
    const { webhook } = await fetchSetup({ maxBodyBytes: 1024 });
    let pulled = 0;
    let cancelled = false;
    const endless = new ReadableStream<Uint8Array>({
      pull(controller) {
        pulled++;
        controller.enqueue(new Uint8Array(512));
      },
      cancel() {
        cancelled = true;
      },
    });
    const answer = await webhook.fetch(
      new Request("http://localhost/hook", {
        method: "POST",
        headers: authorized,
        body: endless,
        duplex: "half",
      } as RequestInit),
    );
    expect(answer.status).toBe(413);
    expect(cancelled).toBe(true);
    expect(pulled).toBeLessThan(10);
  });
});

describe("webhookHandler options", () => {
  const intake = { accept: () => Promise.resolve({ status: "stored" as const }) };

  it("checks its options whole, naming the option and never the secret", () => {
    expect(() => webhookHandler(intake, { secretTokn: SECRET } as never)).toThrow(
      "Unknown option `secretTokn` in `options` (did you mean `secretToken`?)",
    );
    const bad = (() => {
      try {
        webhookHandler(intake, { secretToken: "has space secret" });
      } catch (error) {
        return error as Error;
      }
    })();
    expect(bad).toBeInstanceOf(RangeError);
    expect(bad?.message).toContain("`secretToken`");
    expect(bad?.message).not.toContain("has space");
    expect(() => webhookHandler(intake, { secretToken: "x".repeat(257) })).toThrow(RangeError);
    expect(() => webhookHandler(intake, { secretToken: "" })).toThrow(RangeError);
    expect(() => webhookHandler(intake, { maxBodyBytes: 100 })).toThrow(
      "Expected `maxBodyBytes` to be an integer >= 1024, got 100",
    );
    expect(() => webhookHandler(intake, { retryAfterSeconds: 0 })).toThrow(RangeError);
    expect(() => webhookHandler(intake, { timeoutMs: 60_000 })).toThrow(
      "Expected `timeoutMs` to be an integer >= 1 and <= 55000, got 60000",
    );
    expect(() => webhookHandler(intake, { logger: {} as never })).toThrow(TypeError);
    expect(() => webhookHandler({} as never)).toThrow("Expected `intake` to be an UpdateIntake");
  });

  it("checks a request given to handle()", async () => {
    const webhook: WebhookHandler = webhookHandler(intake);
    await expect(
      webhook.handle({ method: "POST", secretToken: undefined, body: { text: "{}" } } as never),
    ).rejects.toThrow("Unknown option `text` in `request.body`");
  });

  it("sizes the default body bound well above Telegram's largest update", () => {
    // A 4096-character message with 100 entities and a 100-button keyboard, replying to another
    // such message; every character 3 bytes in UTF-8 (CJK).
    const text = "字".repeat(4096);
    const entities = Array.from({ length: 100 }, (_, i) => ({
      type: "text_link",
      offset: i * 40,
      length: 30,
      url: `https://example.org/${"p".repeat(40)}/${i}`,
    }));
    const keyboard = Array.from({ length: 10 }, (_, row) =>
      Array.from({ length: 10 }, (_, col) => ({
        text: "字".repeat(64),
        callback_data: "d".repeat(64).slice(0, 62) + String(row * 10 + col).padStart(2, "0"),
      })),
    );
    const message = (id: number) => ({
      ...privateMessage(id, 1).message,
      text,
      entities,
      reply_markup: { inline_keyboard: keyboard },
    });
    const largest = { update_id: 1, message: { ...message(2), reply_to_message: message(1) } };
    const bytes = new TextEncoder().encode(JSON.stringify(largest)).length;
    expect(bytes).toBeLessThan(webhookHandlerDefaults.maxBodyBytes / 4);
  });
});
