// The node:http adapter of webhookHandler: a `(req, res)` request listener that reads the body
// itself within `maxBodyBytes` (an oversized one is cut off, not buffered) and answers.

import { concatBytes } from "./concat-bytes.js";
import {
  SECRET_HEADER,
  type WebhookBody,
  type WebhookCore,
  type WebhookResponse,
} from "./webhook-core.js";

/**
 * What the adapter reads of a request: `http.IncomingMessage` (and Express's and Fastify's raw
 * request, which are one) fits.
 */
export interface NodeWebhookRequest {
  readonly method?: string | undefined;
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
  on(event: "data" | "end" | "error" | "close", listener: (chunk?: unknown) => void): unknown;
  off(event: "data" | "end" | "error" | "close", listener: (chunk?: unknown) => void): unknown;
  pause(): unknown;
}

/** What the adapter writes to: `http.ServerResponse` fits. */
export interface NodeWebhookResponse {
  readonly headersSent: boolean;
  writeHead(status: number, headers: Record<string, string>): unknown;
  end(body?: string): unknown;
}

/** The first value of a header Node may hand over as a list. */
export function headerValue(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

/**
 * Reads a request body of at most `maxBytes`: the bytes, `too-large` as soon as it would be
 * larger (the rest is left unread), or `gone` when the client went away first.
 */
export function readNodeBody(
  req: NodeWebhookRequest,
  maxBytes: number,
): Promise<WebhookBody | "too-large" | "gone"> {
  return new Promise((resolve) => {
    const chunks: Uint8Array[] = [];
    let size = 0;
    const finish = (result: WebhookBody | "too-large" | "gone"): void => {
      req.off("data", onData);
      req.off("end", onEnd);
      req.off("error", onGone);
      req.off("close", onGone);
      resolve(result);
    };
    const onData = (chunk?: unknown): void => {
      const bytes = chunk as Uint8Array;
      size += bytes.length;
      if (size > maxBytes) {
        req.pause();
        finish("too-large");
        return;
      }
      chunks.push(bytes);
    };
    const onEnd = (): void => finish({ bytes: concatBytes(chunks, size) });
    const onGone = (): void => finish("gone");
    req.on("data", onData);
    req.on("end", onEnd);
    req.on("error", onGone);
    req.on("close", onGone);
  });
}

/** Writes a webhook answer, unless the framework has already started one. */
export function sendNodeResponse(res: NodeWebhookResponse, response: WebhookResponse): void {
  if (res.headersSent) return;
  res.writeHead(response.status, {
    ...response.headers,
    "Content-Length": String(new TextEncoder().encode(response.body).length),
  });
  res.end(response.body);
}

/** Answers one request from its method, secret header and (given or read) body. */
export async function serveNode(
  core: WebhookCore,
  req: NodeWebhookRequest,
  res: NodeWebhookResponse,
  given: WebhookBody | undefined,
): Promise<void> {
  const refused = core.precheck(req.method, headerValue(req.headers[SECRET_HEADER]));
  if (refused !== undefined) {
    sendNodeResponse(res, refused);
    return;
  }
  // Checked for a body a parser already read too: its own limit may be larger.
  const declared = Number(headerValue(req.headers["content-length"]));
  const body =
    declared > core.maxBodyBytes
      ? "too-large"
      : (given ?? (await readNodeBody(req, core.maxBodyBytes)));
  if (body === "gone") return; // nobody to answer; Telegram sends it again
  sendNodeResponse(res, body === "too-large" ? core.answer("too-large") : await core.accept(body));
}

/** The `(req, res)` listener of `http.createServer` (and `https`, and http2's compatibility API). */
export function nodeListener(
  core: WebhookCore,
): (req: NodeWebhookRequest, res: NodeWebhookResponse) => void {
  return (req, res) => {
    void serveNode(core, req, res, undefined);
  };
}
