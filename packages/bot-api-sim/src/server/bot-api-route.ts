// The Bot API route, `/bot<token>/<method>`: reads the request, finds the method, applies the
// injected latency and faults, runs the handler and reports the call.

import type { IncomingMessage, ServerResponse } from "node:http";
import { type FaultMessage, publish } from "../diagnostics.js";
import type { MethodContext } from "../methods/bot-messages.js";
import { canonicalMethod } from "../methods/known-methods.js";
import { METHOD_HANDLERS } from "../methods/method-table.js";
import { ApiFailure } from "../wire/api-failure.js";
import type { FaultInjector, PlannedFault } from "../wire/faults.js";
import { ClientGoneError, parseRequestParams, readBody } from "../wire/request-body.js";
import type { SimWorld } from "../world/sim-world.js";
import { authenticate, respond } from "./respond.js";

/** Answers `/bot<token>/<method>`: token, body, method lookup, faults, then the handler. */
export async function serveBotApi(
  world: SimWorld,
  faults: FaultInjector,
  req: IncomingMessage,
  res: ServerResponse,
  rest: string,
  query: string,
  signal: AbortSignal,
): Promise<void> {
  world.counters.add("requests");
  const started = world.now();
  if (req.method !== "GET" && req.method !== "POST") {
    req.resume();
    respond(world, res, new ApiFailure(501, "Not Implemented"));
    return;
  }
  const slash = rest.indexOf("/");
  const token = slash < 0 ? rest : rest.slice(0, slash);
  const bot = authenticate(world, res, token);
  if (bot === undefined) {
    req.resume();
    return;
  }
  let methodName = slash < 0 ? "" : rest.slice(slash + 1);
  let status: number | undefined;
  let canonical: string | undefined;
  try {
    const body = await readBody(req, world.options.maxRequestBytes);
    const params = parseRequestParams(query, req.headers["content-type"], body);
    if (methodName.length === 0) methodName = params.get("method") ?? "";
    const method = canonicalMethod(methodName);
    canonical = method;
    world.counters.call(method ?? "<unknown>");
    if (method === undefined) {
      status = respond(world, res, new ApiFailure(404, "Not Found: method not found"));
      return;
    }
    const handler = METHOD_HANDLERS.get(method);
    if (handler === undefined) {
      status = respond(
        world,
        res,
        new ApiFailure(
          400,
          `Bad Request: method ${method} is not implemented by the simulator (@telepace/bot-api-sim)`,
        ),
      );
      return;
    }
    const latency = faults.latencyFor(method);
    if (latency > 0) await world.options.clock.sleep(latency, { signal });
    const fault = faults.take(method);
    if (fault !== undefined && !fault.afterProcessing) {
      status = injectApiFault(world, req, res, method, fault);
      return;
    }
    const ctx: MethodContext = { world, bot, params, method, signal };
    let outcome: unknown;
    try {
      outcome = await handler(ctx);
    } catch (error) {
      if (!(error instanceof ApiFailure)) throw error;
      outcome = error;
    }
    if (fault !== undefined) {
      status = injectApiFault(world, req, res, method, fault);
      return;
    }
    status = respond(world, res, outcome);
  } catch (error) {
    if (error instanceof ClientGoneError || signal.aborted) {
      res.destroy();
      return;
    }
    if (error instanceof ApiFailure) {
      status = respond(world, res, error);
      return;
    }
    throw error;
  } finally {
    if (status !== undefined) {
      const fields = {
        botId: bot.id,
        method: canonical ?? "<unknown>",
        status,
        durationMs: world.now() - started,
      };
      publish("request", () => ({ type: "request", ...fields }));
      world.log("debug", fields, "bot-api-sim: request");
    }
  }
}

/** How events name a fault: its kind, with random errors told apart from planned failures. */
function faultName(fault: PlannedFault): FaultMessage["fault"] {
  return fault.kind === "fail" && fault.random ? "random-error" : fault.kind;
}

function injectApiFault(
  world: SimWorld,
  req: IncomingMessage,
  res: ServerResponse,
  method: string,
  fault: PlannedFault,
): number | undefined {
  world.counters.add("faultsInjected");
  publish("fault", () => ({ type: "fault", method, fault: faultName(fault) }));
  world.log("info", { method, fault: fault.kind }, "bot-api-sim: fault injected");
  world.events.emit({ type: "fault", method, fault: faultName(fault) });
  if (fault.kind === "reset") {
    req.socket.destroy();
    return undefined;
  }
  if (fault.kind === "malformed") {
    const payload = '{"ok":true,"result":{"message_id":';
    world.counters.response(200);
    res.writeHead(200, { "Content-Type": "application/json", "Content-Length": payload.length });
    res.end(payload);
    return 200;
  }
  const failure = new ApiFailure(
    fault.code,
    fault.description,
    fault.retryAfter === undefined ? undefined : { retry_after: fault.retryAfter },
  );
  return respond(world, res, failure);
}
