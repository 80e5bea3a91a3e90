// Real servers of the frameworks telepace's webhook adapters are for — node:http, Express (with
// and without express.json() in front), Fastify, Hono, and a bare Fetch API handler as Bun.serve
// and Deno.serve run one (on @hono/node-server) — on loopback.

import { once } from "node:events";
import { createServer, type RequestListener, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { serve } from "@hono/node-server";
import express, { type RequestHandler } from "express";
import Fastify, { type RouteShorthandOptionsWithHandler } from "fastify";
import { Hono } from "hono";

/**
 * A framework (for Express, whether `express.json()` runs first; `fetch` is a bare
 * `(Request) => Response` server, the shape of `Bun.serve`, `Deno.serve` and Workers).
 */
export type WebhookFramework =
  | "node:http"
  | "express"
  | "express.json"
  | "fastify"
  | "hono"
  | "fetch";

/** Every {@link WebhookFramework}, for `describe.each`. */
export const WEBHOOK_FRAMEWORKS: readonly WebhookFramework[] = Object.freeze([
  "node:http",
  "express",
  "express.json",
  "fastify",
  "hono",
  "fetch",
]);

/** The adapters a webhook handler offers, typed by what each framework takes. */
export interface WebhookAdapters {
  readonly node: RequestListener;
  readonly fetch: (request: Request) => Promise<Response>;
  readonly express: RequestHandler;
  readonly fastify: RouteShorthandOptionsWithHandler;
}

/** A framework's server with the webhook mounted at `url`. */
export interface WebhookServer {
  /** `http://127.0.0.1:<port>/telegram/webhook`. */
  readonly url: string;
  close(): Promise<void>;
}

const PATH = "/telegram/webhook";

async function listening(server: Server): Promise<string> {
  if (!server.listening) await once(server, "listening");
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}${PATH}`;
}

async function closing(server: Server): Promise<void> {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
}

/**
 * Starts `framework` on a free loopback port with the webhook at {@link WebhookServer.url} (for
 * node:http and fetch, every path), as a user of that framework would mount it.
 *
 * @example
 * const server = await serveWebhook("fastify", webhookHandler(intake));
 * await bot.api.setWebhook(server.url);
 */
export async function serveWebhook(
  framework: WebhookFramework,
  adapters: WebhookAdapters,
): Promise<WebhookServer> {
  if (framework === "fastify") {
    const app = Fastify();
    app.post(PATH, adapters.fastify);
    const address = await app.listen({ port: 0, host: "127.0.0.1" });
    return { url: `${address}${PATH}`, close: () => app.close() };
  }
  let server: Server;
  if (framework === "node:http") {
    server = createServer(adapters.node).listen(0, "127.0.0.1");
  } else if (framework === "fetch") {
    server = serve({ fetch: adapters.fetch, port: 0, hostname: "127.0.0.1" }) as Server;
  } else if (framework === "hono") {
    const app = new Hono();
    app.post(PATH, (c) => adapters.fetch(c.req.raw));
    server = serve({ fetch: app.fetch, port: 0, hostname: "127.0.0.1" }) as Server;
  } else {
    const app = express();
    if (framework === "express.json") app.use(express.json());
    app.post(PATH, adapters.express);
    server = app.listen(0, "127.0.0.1");
  }
  const url = await listening(server);
  return { url, close: () => closing(server) };
}
