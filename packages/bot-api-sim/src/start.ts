// The composition root: validates the options, builds the world, the fault injector, the HTTP
// server and the handle, mounts the control API on the server and starts listening.

import { BotApiSim } from "./control/bot-api-sim.js";
import { createControlHandler } from "./control/control-http.js";
import { BotApiSimError } from "./errors.js";
import { type BotApiSimOptions, resolveOptions } from "./options.js";
import { SimHttpServer } from "./server/http-server.js";
import { runWebhookReply } from "./server/webhook-reply.js";
import { connectWebhook } from "./server/webhook-transport.js";
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
  server.mountControl(createControlHandler(sim));
  return sim;
}
