// webhookHandler(intake, options): Telegram's webhook over UpdateIntake.accept(), with the
// status Telegram needs for every case and one adapter per kind of server.

import {
  WebhookCore,
  type WebhookHandlerSnapshot,
  type WebhookIntake,
  type WebhookRequest,
  type WebhookResponse,
} from "./webhook-core.js";
import { type ExpressWebhookRequest, expressMiddleware } from "./webhook-express.js";
import { type FastifyWebhookRoute, fastifyRoute } from "./webhook-fastify.js";
import { fetchHandler } from "./webhook-fetch.js";
import { type NodeWebhookRequest, type NodeWebhookResponse, nodeListener } from "./webhook-node.js";
import { resolveWebhookOptions, type WebhookHandlerOptions } from "./webhook-options.js";

/** Telegram's webhook over an intake, for every kind of server; see {@link webhookHandler}. */
export interface WebhookHandler {
  /** A `node:http` request listener: `http.createServer(webhook.node)`; reads the body itself. */
  readonly node: (req: NodeWebhookRequest, res: NodeWebhookResponse) => void;
  /**
   * The Fetch API: `Request` → `Promise<Response>`, for Hono (`(c) => webhook.fetch(c.req.raw)`),
   * `Bun.serve({ fetch: webhook.fetch })`, `Deno.serve(webhook.fetch)` and Cloudflare Workers.
   */
  readonly fetch: (request: Request) => Promise<Response>;
  /**
   * An Express middleware: `app.post("/telegram", webhook.express)`. Takes the body
   * `express.json()` parsed when it ran first, and reads the body itself within `maxBodyBytes`
   * otherwise. A `Content-Length` over `maxBodyBytes` is a 413 either way; a chunked body a
   * parser read is bounded by that parser's `limit`.
   */
  readonly express: (req: ExpressWebhookRequest, res: NodeWebhookResponse) => void;
  /**
   * Fastify route options: `fastify.post("/telegram", webhook.fastify)`. Fastify's JSON parser
   * reads the body within `bodyLimit` (= `maxBodyBytes`); the method and the secret are checked
   * before it runs.
   */
  readonly fastify: FastifyWebhookRoute;
  /** The answer to one request, for any other framework: map its request in and the answer out. */
  handle(request: WebhookRequest): Promise<WebhookResponse>;
  /** Counters of the answers given, by outcome. */
  snapshot(): WebhookHandlerSnapshot;
}

/**
 * Serves Telegram's webhook over `intake.accept()`. Each answer is what Telegram needs:
 *
 * | request | answer |
 * | --- | --- |
 * | not POST | 405 |
 * | wrong or missing `X-Telegram-Bot-Api-Secret-Token` (with `secretToken`) | 401, body unread |
 * | body over `maxBodyBytes` | 413, the rest unread |
 * | not JSON, or not an update (no integer `update_id`) | 400 |
 * | stored, or stored before (a redelivery) | 200, only once the journal holds it |
 * | `maxUnfinished` reached (`busy`) | 503 with `Retry-After: retryAfterSeconds` |
 * | the journal took longer than `timeoutMs` | 503 with `Retry-After` |
 * | the intake is closing | 503 |
 * | the journal failed | 500 |
 *
 * Telegram sends every update again until it gets a 2xx. No answer and no log line carries the
 * body or a token.
 *
 * @param intake - an {@link UpdateIntake} (anything with its `accept`).
 * @throws {TypeError | RangeError} when an option is unknown or invalid, naming it.
 *
 * @example
 * const intake = new UpdateIntake(processor, { journal });
 * const webhook = webhookHandler(intake, { secretToken: process.env.WEBHOOK_SECRET });
 * http.createServer(webhook.node).listen(8443);
 */
export function webhookHandler(
  intake: WebhookIntake,
  options?: WebhookHandlerOptions,
): WebhookHandler {
  if (typeof (intake as { accept?: unknown } | null)?.accept !== "function") {
    throw new TypeError("Expected `intake` to be an UpdateIntake (an object with `accept`)");
  }
  const core = new WebhookCore(intake, resolveWebhookOptions(options));
  return Object.freeze({
    node: nodeListener(core),
    fetch: fetchHandler(core),
    express: expressMiddleware(core),
    fastify: fastifyRoute(core),
    handle: (request: WebhookRequest) => core.handle(request),
    snapshot: () => core.snapshot(),
  });
}
