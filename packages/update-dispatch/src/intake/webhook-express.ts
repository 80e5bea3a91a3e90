// The Express adapter of webhookHandler: a middleware that takes the body `express.json()` (or
// `express.raw()`, `express.text()`) parsed before it, and reads it itself when nothing did.

import { bodyFromFramework, type WebhookCore } from "./webhook-core.js";
import { type NodeWebhookRequest, type NodeWebhookResponse, serveNode } from "./webhook-node.js";

/** What the adapter reads of an Express request: a Node request, plus what a body parser left. */
export interface ExpressWebhookRequest extends NodeWebhookRequest {
  readonly body?: unknown;
  /** True once a body parser (or anything) has read the stream to its end. */
  readonly readableEnded?: boolean;
}

/** An Express middleware: `app.post("/telegram", webhook.express)`. */
export function expressMiddleware(
  core: WebhookCore,
): (req: ExpressWebhookRequest, res: NodeWebhookResponse) => void {
  return (req, res) => {
    // A parser that ran has consumed the stream; one that skipped the request left it unread.
    const parsed = req.readableEnded === true ? bodyFromFramework(req.body) : undefined;
    void serveNode(core, req, res, parsed);
  };
}
