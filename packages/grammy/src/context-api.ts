// A context whose Api lacks the telepace transformer gets one that has it, underneath the Api's
// own transformers. `@grammyjs/conversations` builds each context of a conversation on a fresh
// Api (the token and options only, with its replay recorder installed), so without this its
// calls would skip the outbox; underneath the recorder, a replayed call is answered from the
// record without being paced or sent again.

import { Api, type Context, type Transformer } from "grammy";

/** Puts `transformer` under `ctx.api` when it is not installed there; whether it had to. */
export function adoptTransformer(ctx: Context, transformer: Transformer): boolean {
  const own = ctx.api.config.installedTransformers();
  if (own.includes(transformer)) return false;
  const api = new Api(ctx.api.token, ctx.api.options);
  api.config.use(transformer, ...own);
  (ctx as { api: Api }).api = api;
  return true;
}
