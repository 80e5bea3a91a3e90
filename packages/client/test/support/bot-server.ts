// A scripted Bot API server on loopback: records every request (JSON or multipart, parsed) and
// answers through a handler the test sets.

import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

/** A part of a multipart upload. */
export interface UploadedFile {
  readonly filename: string;
  readonly type: string;
  readonly data: Buffer;
}

/** One request as the server saw it. */
export interface RecordedRequest {
  /** `sendMessage` for `/bot<token>/sendMessage`, `file:<path>` for `/file/bot<token>/<path>`. */
  readonly method: string;
  /** The request path and query, as the client sent it (the token included). */
  readonly url: string;
  readonly token: string;
  readonly httpMethod: string;
  readonly headers: IncomingMessage["headers"];
  readonly raw: Buffer;
  /** Parsed fields: JSON values for a JSON body, strings for multipart fields. */
  readonly params: Record<string, unknown>;
  readonly files: Record<string, UploadedFile>;
}

/** Answers a request; may write the response later or never (to hang). */
export type Handler = (request: RecordedRequest, res: ServerResponse) => void | Promise<void>;

/** Writes a Bot API success envelope. */
export function ok(res: ServerResponse, result: unknown): void {
  res.writeHead(200, { "content-type": "application/json" });
  res.end(JSON.stringify({ ok: true, result }));
}

/** Writes a Bot API error envelope with the status equal to the error code. */
export function apiError(
  res: ServerResponse,
  errorCode: number,
  description: string,
  parameters?: Record<string, unknown>,
  headers: Record<string, string> = {},
): void {
  res.writeHead(errorCode, { "content-type": "application/json", ...headers });
  res.end(
    JSON.stringify({
      ok: false,
      error_code: errorCode,
      description,
      ...(parameters ? { parameters } : {}),
    }),
  );
}

/** A message object as Telegram returns it. */
export function message(messageId: number, chatId: number, text: string) {
  return {
    message_id: messageId,
    date: 0,
    chat: { id: chatId, type: "private", first_name: "u" },
    text,
  };
}

export class BotServer {
  readonly requests: RecordedRequest[] = [];
  #handler: Handler = (request, res) =>
    ok(res, request.method === "deleteMessage" ? true : message(1, 1, "x"));
  readonly #server: Server;
  readonly #sockets = new Set<import("node:net").Socket>();

  private constructor() {
    this.#server = createServer((req, res) => {
      void this.#handle(req, res);
    });
    this.#server.on("connection", (socket) => {
      this.#sockets.add(socket);
      socket.on("close", () => this.#sockets.delete(socket));
    });
  }

  static async start(handler?: Handler): Promise<BotServer> {
    const server = new BotServer();
    if (handler) server.handle(handler);
    await new Promise<void>((resolve) => server.#server.listen(0, "127.0.0.1", resolve));
    return server;
  }

  /** The apiRoot to give the client. */
  get url(): string {
    return `http://127.0.0.1:${(this.#server.address() as AddressInfo).port}`;
  }

  /** Methods called, in order. */
  get methods(): string[] {
    return this.requests.map((r) => r.method);
  }

  handle(handler: Handler): void {
    this.#handler = handler;
  }

  async close(): Promise<void> {
    for (const socket of this.#sockets) socket.destroy();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }

  async #handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const raw = Buffer.concat(chunks);
    const url = new URL(req.url ?? "/", "http://localhost");
    const file = /^(?:\/[^/]+)*?\/file\/bot([^/]+)\/(.+)$/.exec(url.pathname);
    const call = /^(?:\/[^/]+)*?\/bot([^/]+)\/([^/]+)$/.exec(url.pathname);
    const token = decodeURIComponent((file ?? call)?.[1] ?? "");
    const method = file ? `file:${file[2]}` : (call?.[2] ?? url.pathname);
    const params: Record<string, unknown> = {};
    const files: Record<string, UploadedFile> = {};
    const type = req.headers["content-type"] ?? "";
    if (type.startsWith("application/json"))
      Object.assign(params, JSON.parse(raw.toString("utf8")));
    if (type.startsWith("multipart/form-data")) {
      const form = await new Response(raw, { headers: { "content-type": type } }).formData();
      for (const [name, value] of form) {
        if (typeof value === "string") params[name] = value;
        else
          files[name] = {
            filename: value.name,
            type: value.type,
            data: Buffer.from(await value.arrayBuffer()),
          };
      }
    }
    const request: RecordedRequest = {
      method,
      url: req.url ?? "/",
      token,
      httpMethod: req.method ?? "",
      headers: req.headers,
      raw,
      params,
      files,
    };
    this.requests.push(request);
    await this.#handler(request, res);
  }
}
