// The Fetch API adapter of webhookHandler: `Request` in, `Response` out, for Hono, Bun.serve,
// Deno.serve and Cloudflare Workers. The body stream is read within `maxBodyBytes` and cancelled
// past it.

import { concatBytes } from "./concat-bytes.js";
import { SECRET_HEADER, type WebhookCore, type WebhookResponse } from "./webhook-core.js";

function toResponse(response: WebhookResponse): Response {
  return new Response(response.body.length === 0 ? null : response.body, {
    status: response.status,
    headers: response.headers,
  });
}

/** The body's bytes, or `undefined` once it would be larger than `maxBytes` (then cancelled). */
async function readFetchBody(request: Request, maxBytes: number): Promise<Uint8Array | undefined> {
  if (Number(request.headers.get("content-length")) > maxBytes) {
    await request.body?.cancel().catch(() => {});
    return undefined;
  }
  if (request.body === null) return new Uint8Array(0);
  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.length;
    if (size > maxBytes) {
      await reader.cancel().catch(() => {});
      return undefined;
    }
    chunks.push(value);
  }
  return concatBytes(chunks, size);
}

/** `(request) => Promise<Response>`: `Bun.serve({ fetch })`, `Deno.serve(fetch)`, Hono's `c.req.raw`. */
export function fetchHandler(core: WebhookCore): (request: Request) => Promise<Response> {
  return async (request) => {
    const refused = core.precheck(request.method, request.headers.get(SECRET_HEADER) ?? undefined);
    if (refused !== undefined) return toResponse(refused);
    let bytes: Uint8Array | undefined;
    try {
      bytes = await readFetchBody(request, core.maxBodyBytes);
    } catch {
      // The client went away mid-body: nobody reads this answer, Telegram sends the update again.
      return new Response(null, { status: 400 });
    }
    return toResponse(
      bytes === undefined ? core.answer("too-large") : await core.accept({ bytes }),
    );
  };
}
