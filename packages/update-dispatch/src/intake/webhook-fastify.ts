// The Fastify adapter of webhookHandler: route options for `fastify.post(path, webhook.fastify)`
// — Fastify's JSON parser reads the body within `bodyLimit` (= maxBodyBytes), an onRequest hook
// refuses a wrong method or secret before the body is read, and the handler answers.

import {
  bodyFromFramework,
  SECRET_HEADER,
  type WebhookCore,
  type WebhookResponse,
} from "./webhook-core.js";
import { headerValue } from "./webhook-node.js";

/** What the adapter reads of a Fastify request. */
export interface FastifyWebhookRequest {
  readonly method: string;
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
  readonly body?: unknown;
}

/** What the adapter calls on a Fastify reply. */
export interface FastifyWebhookReply {
  code(statusCode: number): FastifyWebhookReply;
  headers(values: Record<string, string>): FastifyWebhookReply;
  send(payload?: string): FastifyWebhookReply;
}

/** Route options: pass them whole (`fastify.post(path, webhook.fastify)`), or `handler` alone. */
export interface FastifyWebhookRoute {
  /** Fastify's body limit for this route, in bytes: `maxBodyBytes`. Beyond it Fastify answers 413. */
  readonly bodyLimit: number;
  /** Refuses a wrong method (405) or secret token (401) before the body is read. */
  readonly onRequest: (
    request: FastifyWebhookRequest,
    reply: FastifyWebhookReply,
  ) => Promise<FastifyWebhookReply | undefined>;
  /** Answers from the parsed body (and checks the method and secret again, for use alone). */
  readonly handler: (
    request: FastifyWebhookRequest,
    reply: FastifyWebhookReply,
  ) => Promise<FastifyWebhookReply>;
}

function send(reply: FastifyWebhookReply, response: WebhookResponse): FastifyWebhookReply {
  return reply
    .code(response.status)
    .headers({ ...response.headers })
    .send(response.body);
}

/** The route options of the Fastify adapter. */
export function fastifyRoute(core: WebhookCore): FastifyWebhookRoute {
  const refused = (request: FastifyWebhookRequest): WebhookResponse | undefined =>
    core.precheck(request.method, headerValue(request.headers[SECRET_HEADER]));
  return Object.freeze({
    bodyLimit: core.maxBodyBytes,
    onRequest: async (request: FastifyWebhookRequest, reply: FastifyWebhookReply) => {
      const refusal = refused(request);
      return refusal === undefined ? undefined : send(reply, refusal);
    },
    handler: async (request: FastifyWebhookRequest, reply: FastifyWebhookReply) =>
      send(reply, refused(request) ?? (await core.accept(bodyFromFramework(request.body)))),
  });
}
