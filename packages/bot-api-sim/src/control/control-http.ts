// The HTTP mirror of the control API under /_sim, for tools that are not in-process (the CLI's
// users, black-box tests, other languages). Same envelope as the Bot API; snake_case fields.

import type { IncomingMessage, ServerResponse } from "node:http";
import { BotApiSimError, type BotApiSimErrorCode } from "../errors.js";
import { ApiFailure } from "../wire/api-failure.js";
import { failureResponse, sendJson } from "../wire/envelope.js";
import { ClientGoneError } from "../wire/request-body.js";
import type { BotApiSim } from "./bot-api-sim.js";
import { readInput } from "./control-input.js";
import { CONTROL_ROUTES, type Route } from "./control-routes.js";

function statusFor(code: BotApiSimErrorCode): number {
  switch (code) {
    case "ERR_UNKNOWN_BOT":
    case "ERR_UNKNOWN_USER":
    case "ERR_UNKNOWN_CHAT":
    case "ERR_UNKNOWN_MESSAGE":
      return 404;
    case "ERR_WAIT_TIMEOUT":
      return 408;
    case "ERR_SIM_CLOSED":
      return 503;
    case "ERR_STORAGE_FULL":
      return 413;
    default:
      return 400;
  }
}

/**
 * The control API of one simulator, as the HTTP server calls it for paths under its prefix;
 * `extraRoutes` (the chat page's) are served beside the control routes.
 */
export function createControlHandler(
  sim: BotApiSim,
  extraRoutes: ReadonlyMap<string, Route> = new Map(),
): (req: IncomingMessage, res: ServerResponse, path: string, query: string) => Promise<void> {
  return (req, res, path, query) => handleControl(sim, extraRoutes, req, res, path, query);
}

async function handleControl(
  sim: BotApiSim,
  extraRoutes: ReadonlyMap<string, Route>,
  req: IncomingMessage,
  res: ServerResponse,
  path: string,
  query: string,
): Promise<void> {
  const key = `${req.method ?? "GET"} ${path === "" ? "/" : path.replace(/\/+$/, "") || "/"}`;
  const route = CONTROL_ROUTES.get(key) ?? extraRoutes.get(key);
  if (route === undefined) {
    req.resume();
    sendJson(res, 404, {
      ok: false,
      error_code: 404,
      description: "Not Found: no such control route",
    });
    return;
  }
  try {
    const input = await readInput(req, query, route.fields);
    const result = await route.run(sim, input);
    sendJson(res, 200, { ok: true, result: result === undefined ? true : result });
  } catch (error) {
    if (error instanceof ClientGoneError) {
      res.destroy();
      return;
    }
    if (error instanceof BotApiSimError) {
      const status = statusFor(error.code);
      sendJson(res, status, {
        ok: false,
        error_code: status,
        description: error.message,
        code: error.code,
      });
      return;
    }
    if (error instanceof TypeError || error instanceof RangeError) {
      sendJson(res, 400, {
        ok: false,
        error_code: 400,
        description: `${error.name}: ${error.message}`,
      });
      return;
    }
    if (error instanceof ApiFailure) {
      const { body, headers } = failureResponse(error);
      sendJson(res, error.errorCode, body, headers);
      return;
    }
    throw error;
  }
}
