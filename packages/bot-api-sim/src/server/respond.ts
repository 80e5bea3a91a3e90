// How the server answers a Bot API or file request: the envelope of a method's outcome (counted
// per status), and the token check both routes start with.

import type { ServerResponse } from "node:http";
import { ApiSuccess } from "../methods/bot-messages.js";
import { ApiFailure } from "../wire/api-failure.js";
import { type Envelope, failureResponse, sendJson } from "../wire/envelope.js";
import { parseTokenBotId } from "../wire/token.js";
import type { BotRecord } from "../world/bot-record.js";
import type { SimWorld } from "../world/sim-world.js";

/** Answers a method's outcome (a result, an ApiSuccess or an ApiFailure) and counts it. */
export function respond(world: SimWorld, res: ServerResponse, outcome: unknown): number {
  if (outcome instanceof ApiFailure) {
    const { body, headers } = failureResponse(outcome);
    world.counters.response(outcome.errorCode);
    sendJson(res, outcome.errorCode, body, headers);
    return outcome.errorCode;
  }
  const body: Envelope =
    outcome instanceof ApiSuccess
      ? outcome.description === undefined
        ? { ok: true, result: outcome.result }
        : { ok: true, result: outcome.result, description: outcome.description }
      : { ok: true, result: outcome };
  world.counters.response(200);
  sendJson(res, 200, body);
  return 200;
}

/** Resolves the token of a `/bot…` or `/file/bot…` path, or answers 401 and returns undefined. */
export function authenticate(
  world: SimWorld,
  res: ServerResponse,
  token: string,
): BotRecord | undefined {
  if (parseTokenBotId(token) === undefined) {
    respond(world, res, new ApiFailure(401, "Unauthorized: invalid token specified"));
    return undefined;
  }
  const bot = world.botByToken(token);
  if (bot === undefined) respond(world, res, new ApiFailure(401, "Unauthorized"));
  return bot;
}
