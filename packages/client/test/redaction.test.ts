import { inspect } from "node:util";
import { ManualClock } from "@telepace/core";
import { eventually } from "@telepace/testing";
import { describe, expect, it } from "vitest";
import { TelegramApiError, TelegramClient } from "../src/index.js";
import { redactSecret } from "../src/redact.js";
import { apiError, ok } from "./support/bot-server.js";
import { connect, TOKEN } from "./support/client.js";

const SECRET_PART = TOKEN.split(":")[1] as string;

/** Every rendering of a value a log or a crash report could produce. */
function renderings(value: unknown): string[] {
  const out = [
    inspect(value, { depth: Number.POSITIVE_INFINITY, showHidden: true }),
    String(value),
  ];
  try {
    out.push(JSON.stringify(value) ?? "");
  } catch {
    // circular: inspect covers it
  }
  for (let current: unknown = value; current instanceof Error; current = current.cause) {
    out.push(current.message, current.stack ?? "");
  }
  return out;
}

function expectClean(value: unknown): void {
  for (const text of renderings(value)) {
    expect(text).not.toContain(SECRET_PART);
    expect(text).not.toContain(encodeURIComponent(TOKEN));
  }
}

describe("the token never leaks", { timeout: 30_000 }, () => {
  it("redactSecret scrubs messages, stacks, string fields, causes and aggregated errors in place", () => {
    const inner = Object.assign(new Error(`GET /bot${TOKEN}/getMe failed`), {
      path: `/bot${TOKEN}/getMe`,
    });
    const aggregate = new AggregateError(
      [new Error(`to /bot${encodeURIComponent(TOKEN)}/x`)],
      "many",
    );
    const outer = new Error("outer", { cause: new Error(`wrapped ${TOKEN}`, { cause: inner }) });
    (outer as { related?: unknown }).related = aggregate;
    expect(redactSecret(outer, TOKEN)).toBe(outer);
    expectClean(outer);
    expect(inner.message).toBe("GET /bot<redacted>/getMe failed");
    expect(redactSecret(`token ${TOKEN}`, TOKEN)).toBe("token <redacted>");
  });

  it("no error, outcome, stack, log line or snapshot of a failing client contains it", async () => {
    const clock = new ManualClock();
    const lines: unknown[] = [];
    const logger = Object.fromEntries(
      ["debug", "info", "warn", "error"].map((level) => [
        level,
        (fields: unknown, msg: string) => lines.push([fields, msg]),
      ]),
    ) as never;
    const { server, client } = await connect(
      (request, res) => {
        switch (request.params.text ?? request.method) {
          case "reset":
            return void res.socket?.destroy();
          case "malformed":
            res.writeHead(200);
            return void res.end(`{"ok":tru ${request.token}`);
          case "api":
            return apiError(res, 401, "Unauthorized");
          case "echo":
            // A proxy in front of the API that echoes the request path.
            return apiError(res, 404, `Not Found: /bot${request.token}/sendMessage`);
          case "hang":
            return;
          case "file:cut.bin":
            res.writeHead(200, { "content-length": "100" });
            res.write("partial");
            return void setTimeout(() => res.socket?.destroy(), 10);
          default:
            return ok(res, true);
        }
      },
      { clock, logger, requestTimeoutMs: 1_000, outbox: { maxAttempts: 1 } },
    );
    const collected: unknown[] = [];
    for (const text of ["reset", "malformed", "api", "echo"])
      collected.push(await client.sendMessage(1, text));
    collected.push(
      await client.call("sendMessage", { chat_id: 1, text: "echo" }).catch((e: unknown) => e),
    );
    collected.push(
      await client.call("sendMessage", { chat_id: 1, text: "reset" }).catch((e: unknown) => e),
    );
    collected.push(await client.editMessageText(1, 2, "reset"));
    const hanging = client.sendMessage(1, "hang");
    await eventually("the hanging send arrived", () =>
      expect(server.requests.filter((r) => r.params.text === "hang")).toHaveLength(1),
    );
    await clock.advance(1_000);
    collected.push(await hanging);
    const download = await client.downloadFile("cut.bin");
    collected.push(
      await (async () => {
        for await (const _ of download.body) {
          // drain until the connection breaks
        }
      })().catch((e: unknown) => e),
    );

    // A refused connection, whose undici error names the host and port.
    const refused = new TelegramClient({
      token: TOKEN,
      apiRoot: "http://127.0.0.1:1",
      logger,
      outbox: { maxAttempts: 1 },
    });
    collected.push(await refused.sendMessage(1, "x"));
    collected.push(await refused.getMe().catch((e: unknown) => e));
    await refused.close();

    expect(collected.filter((c) => c === undefined)).toEqual([]);
    for (const item of collected) expectClean(item);
    expectClean(lines);
    expectClean(client.outbox.snapshot());
    expectClean(client);
    // The scenarios really failed in the ways the test means.
    expect(collected.map((c) => (c as { status?: string }).status ?? (c as Error).name)).toEqual([
      "failed",
      "failed",
      "failed",
      "failed",
      "TelegramApiError",
      "NetworkError",
      "failed",
      "failed",
      expect.any(String),
      "failed",
      "NetworkError",
    ]);
  });
});

describe("the token never leaks through what a server echoes", { timeout: 30_000 }, () => {
  it("redactSecret replaces frozen data with a scrubbed frozen copy instead of mutating it", () => {
    const url = `/bot${TOKEN}/getMe`;
    const nested = Object.freeze({ url, list: Object.freeze([url, encodeURIComponent(TOKEN)]) });
    const parameters = Object.freeze({ echo: url, nested, clean: Object.freeze({ a: 1 }) });
    const error = Object.assign(new Error("failed"), { parameters });
    redactSecret(error, TOKEN);
    expectClean(error);
    expect(error.parameters).not.toBe(parameters);
    expect(Object.isFrozen(error.parameters)).toBe(true);
    expect(error.parameters).toEqual({
      echo: "/bot<redacted>/getMe",
      nested: { url: "/bot<redacted>/getMe", list: ["/bot<redacted>/getMe", "<redacted>"] },
      clean: { a: 1 },
    });
    // The original frozen objects are untouched, and data without the token is not copied.
    expect(parameters.echo).toBe(url);
    expect(error.parameters.clean).toBe(parameters.clean);
    // A frozen value itself comes back as a clean copy; cycles terminate.
    const cyclic: Record<string, unknown> = { url };
    cyclic.self = cyclic;
    expect(redactSecret(Object.freeze(cyclic), TOKEN)).toMatchObject({
      url: "/bot<redacted>/getMe",
    });
    // A lower-case percent-encoding is the same token.
    expect(redactSecret(encodeURIComponent(TOKEN).toLowerCase(), TOKEN)).not.toContain(SECRET_PART);
  });

  it("an echo of the request URL in nested, frozen parameters reaches no error or outcome", async () => {
    const { server, client } = await connect(
      (request, res) =>
        apiError(res, 400, `Bad Request: ${request.url}`, {
          echo: request.url,
          encoded: encodeURIComponent(request.url),
          nested: { request: { url: request.url, list: [request.url, { deeper: request.url }] } },
        }),
      { outbox: { maxAttempts: 1 } },
    );
    const collected: unknown[] = [
      await client.sendMessage(1, "x"),
      await client.editMessageText(1, 2, "x"),
      await client.write("setMessageReaction", { chat_id: 1, message_id: 2 }),
      await client.getMe().catch((e: unknown) => e),
      await client.getFile("F").catch((e: unknown) => e),
      await client.call("getMe").catch((e: unknown) => e),
      await client.downloadFile("a/b.bin").catch((e: unknown) => e),
    ];
    // The server really echoed the token: every request carried it.
    expect(server.requests).toHaveLength(7);
    expect(server.requests.every((r) => r.url.includes(TOKEN))).toBe(true);
    for (const item of collected) {
      expectClean(item);
      const error = ((item as { error?: unknown }).error ?? item) as TelegramApiError;
      expect(error).toBeInstanceOf(TelegramApiError);
      expect(Object.isFrozen(error.parameters)).toBe(true);
      expect(JSON.stringify(error.parameters)).toContain("<redacted>");
      expect(error.description).toContain("<redacted>");
    }
    expectClean(client.outbox.snapshot());
  });
});
