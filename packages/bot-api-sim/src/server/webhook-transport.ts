// The HTTP side of webhook delivery: one keep-alive client per webhook setting, POSTing each
// update as Telegram does (JSON, the secret token header) and reading the answer within a bound.

import http, { STATUS_CODES } from "node:http";
import https from "node:https";
import { MAX_PARAMETERS_BYTES } from "../wire/multipart.js";
import type { WebhookAnswer, WebhookConnection, WebhookTarget } from "../world/webhook-delivery.js";

/** Telegram's texts in getWebhookInfo for the usual connection failures. */
const FAILURE_TEXT: Readonly<Record<string, string>> = Object.freeze({
  ECONNREFUSED: "Connection refused",
  ECONNRESET: "Connection reset by peer",
  EPIPE: "Connection reset by peer",
  ETIMEDOUT: "Connection timed out",
  EHOSTUNREACH: "No route to host",
});

function failure(error: unknown): WebhookAnswer {
  const code = (error as { code?: unknown }).code;
  const text = typeof code === "string" ? FAILURE_TEXT[code] : undefined;
  return { kind: "failure", message: text ?? "Webhook connection closed" };
}

/** `Retry-After` in whole seconds, as the real server reads it; anything else is 0. */
function retryAfterSeconds(value: string | string[] | undefined): number {
  const text = Array.isArray(value) ? value[0] : value;
  return text !== undefined && /^\s*\d+\s*$/.test(text) ? Number(text) : 0;
}

/** Headers every POST of one setting carries. */
function baseHeaders(target: WebhookTarget): Record<string, string> {
  const headers: Record<string, string> = {
    Host: target.url.host,
    "Content-Type": "application/json",
    Connection: "keep-alive",
  };
  if (target.secretToken !== undefined) {
    headers["X-Telegram-Bot-Api-Secret-Token"] = target.secretToken;
  }
  if (target.url.username !== "") {
    // The real server turns a URL's user info into Basic authentication.
    const user = `${decodeURIComponent(target.url.username)}:${decodeURIComponent(target.url.password)}`;
    headers.Authorization = `Basic ${Buffer.from(user).toString("base64")}`;
  }
  return headers;
}

/** Opens the HTTP client of one webhook setting: at most `maxConnections` sockets, kept alive. */
export function connectWebhook(target: WebhookTarget): WebhookConnection {
  const secure = target.url.protocol === "https:";
  const transport = secure ? https : http;
  const agent = new transport.Agent({ keepAlive: true, maxSockets: target.maxConnections });
  const port = target.url.port === "" ? (secure ? 443 : 80) : Number(target.url.port);
  const path = `${target.url.pathname}${target.url.search}`;
  const headers = baseHeaders(target);
  const post = (json: string, signal: AbortSignal): Promise<WebhookAnswer> =>
    new Promise((resolve) => {
      const request = transport.request(
        {
          host: target.address,
          port,
          path,
          method: "POST",
          agent,
          signal,
          ...(secure ? { servername: target.url.hostname } : {}),
          headers: { ...headers, "Content-Length": String(Buffer.byteLength(json)) },
        },
        (response) => {
          // Read now: a kept-alive socket leaves the response once its body has ended.
          const remoteAddress = response.socket?.remoteAddress;
          const chunks: Buffer[] = [];
          let size = 0;
          response.on("data", (chunk: Buffer) => {
            size += chunk.length;
            // Past the bound the body is drained, not kept: no webhook reply then.
            if (size <= MAX_PARAMETERS_BYTES) chunks.push(chunk);
          });
          response.once("error", (error) => resolve(failure(error)));
          response.once("end", () => {
            const status = response.statusCode ?? 0;
            resolve({
              kind: "response",
              status,
              statusText: response.statusMessage || STATUS_CODES[status] || "",
              retryAfterSeconds: retryAfterSeconds(response.headers["retry-after"]),
              contentType: response.headers["content-type"],
              body: size <= MAX_PARAMETERS_BYTES ? Buffer.concat(chunks, size) : undefined,
              remoteAddress,
            });
          });
        },
      );
      request.once("error", (error) => resolve(failure(error)));
      request.end(json);
    });
  return { post, close: () => agent.destroy() };
}
