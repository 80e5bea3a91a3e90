// The composition root: validates the options, builds the world, the fault injector, the HTTP
// server and the handle, starts listening and mounts the control API and the chat page.

import { BotApiSim } from "./control/bot-api-sim.js";
import { createControlHandler } from "./control/control-http.js";
import { BotApiSimError } from "./errors.js";
import { type BotApiSimOptions, resolveOptions } from "./options.js";
import { SimHttpServer } from "./server/http-server.js";
import { runWebhookReply } from "./server/webhook-reply.js";
import { connectWebhook } from "./server/webhook-transport.js";
import { createPageHandler } from "./ui/page-handler.js";
import { createPageRoutes } from "./ui/page-routes.js";
import { FaultInjector } from "./wire/faults.js";
import { SimWorld } from "./world/sim-world.js";

/**
 * Starts a simulator on loopback and resolves once it accepts connections.
 *
 * @example
 * const sim = await start({ timeScale: 20 });
 * const bot = new Bot(sim.token, { client: { apiRoot: sim.apiRoot } });
 * @throws {TypeError | RangeError} for invalid options, naming the option.
 * @throws {BotApiSimError} `ERR_LISTEN_FAILED` when the port cannot be bound.
 */
export async function start(options?: BotApiSimOptions): Promise<BotApiSim> {
  const resolved = resolveOptions(options);
  const world = new SimWorld(resolved, { connect: connectWebhook, reply: runWebhookReply });
  const faults = new FaultInjector(resolved.random);
  const server = new SimHttpServer(world, faults);
  let port: number;
  try {
    port = await server.listen(resolved.port, resolved.host);
  } catch (error) {
    throw new BotApiSimError(
      "ERR_LISTEN_FAILED",
      `Cannot listen on ${resolved.host}:${resolved.port}: ${(error as Error).message}`,
      { cause: error },
    );
  }
  const sim = new BotApiSim({ world, server, faults, port, options: resolved });
  server.mountControl(createControlHandler(sim, createPageRoutes(world)));
  server.mountPage(createPageHandler(world));
  if (!resolved.isLoopback) {
    const text = `@telepace/bot-api-sim listens on ${resolved.host}:${port}, beyond loopback: whoever reaches it can read every chat and act as any user (the control API and the chat page have no authentication)`;
    world.log("warn", { host: resolved.host, port }, text);
    process.emitWarning(text, { code: "TELEPACE_SIM_NOT_LOOPBACK" });
  }
  return sim;
}
