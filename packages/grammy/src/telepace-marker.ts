// Which functions are telepace transformers, and each one's Stop router: how the other parts
// (replaceProgress, ctx.replyWithStream, the webhook entry) find the transformer on an Api.

import type { Api } from "grammy";
import type { StopRouter } from "./stop-router.js";

const installed = new WeakMap<object, StopRouter>();

/** Marks `transformer` as made by `telepace()`, with the router of its streams' Stop presses. */
export function markTelepace(transformer: object, stops: StopRouter): void {
  installed.set(transformer, stops);
}

/** Whether `transformer` was made by `telepace()`. */
export function isTelepaceTransformer(transformer: unknown): boolean {
  return typeof transformer === "function" && installed.has(transformer);
}

/** The Stop router of the telepace transformer installed on `api`, if there is one. */
export function stopRouterOf(api: Api): StopRouter | undefined {
  for (const transformer of api.config.installedTransformers()) {
    const router = installed.get(transformer);
    if (router !== undefined) return router;
  }
  return undefined;
}
