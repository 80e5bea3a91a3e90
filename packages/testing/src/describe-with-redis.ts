// Suites against a real redis-server: one server per test file, started before and stopped after.
// Without redis-server on PATH a suite fails under CI and is skipped (with a warning) elsewhere.

import { afterAll, beforeAll, describe, it } from "vitest";
import {
  REDIS_INSTALL_HINT,
  type RedisTestServer,
  redisSuiteMode,
  type StartRedisOptions,
  startRedis,
} from "./redis-server.js";

/**
 * Like `describe`, with a fresh redis-server for the suite (started with `options`, e.g. `args`
 * that allow `DEBUG`): `server()` inside tests.
 */
export function describeWithRedis(
  name: string,
  body: (server: () => RedisTestServer) => void,
  options: StartRedisOptions = {},
): void {
  const mode = redisSuiteMode([name]);
  if (mode === "fail") {
    describe(name, () => {
      it("needs redis-server on PATH", () => {
        throw new Error(
          `redis-server is not on PATH, so "${name}" cannot run; install it: ${REDIS_INSTALL_HINT}`,
        );
      });
    });
    return;
  }
  if (mode === "skip") {
    describe.skip(name, () => body(() => undefined as never));
    return;
  }
  describe(name, () => {
    let running: RedisTestServer | undefined;
    beforeAll(async () => {
      running = await startRedis(options);
    });
    afterAll(async () => {
      await running?.stop();
    });
    body(() => {
      if (running === undefined) throw new Error("redis-server did not start");
      return running;
    });
  });
}
