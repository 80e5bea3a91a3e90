// One Redis connection as the package uses it: our Lua scripts defined once (EVALSHA, with a
// transparent EVAL when Redis answers NOSCRIPT after a restart), a version check before the first
// script, and client failures turned into RedisStoreErrors.

import { Redis } from "ioredis";
import { MIN_REDIS_VERSION, RedisStoreError } from "./errors.js";
import { storeErrorOf } from "./store-error-of.js";

/** A Lua script and how many of its arguments are keys. */
export interface ScriptSource {
  readonly name: string;
  readonly keys: number;
  readonly lua: string;
}

type ScriptCall = (...args: (string | number)[]) => Promise<unknown>;

function versionAtLeast(version: string, minimum: string): boolean {
  const have = version.split(".").map(Number);
  const need = minimum.split(".").map(Number);
  for (let i = 0; i < need.length; i++) {
    const a = have[i] ?? 0;
    const b = need[i] ?? 0;
    if (a !== b) return a > b;
  }
  return true;
}

/** The `redis_version` field of `INFO server`. */
export function redisVersionOf(info: string): string | undefined {
  return /^redis_version:([0-9.]+)/m.exec(info)?.[1];
}

/**
 * Our connection: given a URL we create the client (and quit it on close), given an ioredis
 * client we use it as is (its owner closes it).
 */
export class ScriptConnection {
  readonly client: Redis;
  readonly #owned: boolean;
  readonly #defined = new Set<string>();
  #checked: Promise<void> | undefined;
  #closed = false;

  constructor(redis: Redis | string) {
    if (typeof redis === "string") {
      // Fail a command after 2 s instead of queueing it for many reconnects: the outbox and the
      // workers retry with their own backoff and say so. No ready check: while Redis loads its
      // data after a restart, commands get its LOADING answer (ERR_REDIS_NOT_READY) instead of
      // waiting unseen in the client until they time out as if Redis were unreachable.
      this.client = new Redis(redis, {
        maxRetriesPerRequest: 1,
        commandTimeout: 2_000,
        enableReadyCheck: false,
        retryStrategy: (times) => Math.min(50 * 2 ** times, 2_000),
      });
      // Errors reach callers through rejected commands; an unhandled 'error' event would crash.
      this.client.on("error", () => {});
      this.#owned = true;
    } else {
      this.client = redis;
      this.#owned = false;
    }
  }

  get isClosed(): boolean {
    return this.#closed;
  }

  /** Runs a script; `what` names it in errors. */
  async run(
    script: ScriptSource,
    args: readonly (string | number)[],
    what: string,
  ): Promise<unknown> {
    if (this.#closed) {
      throw new RedisStoreError("ERR_REDIS_CLOSED", `The ${what} was used after close()`);
    }
    try {
      await this.#checkVersion();
      if (!this.#defined.has(script.name)) {
        this.client.defineCommand(script.name, { numberOfKeys: script.keys, lua: script.lua });
        this.#defined.add(script.name);
      }
      const call = (this.client as unknown as Record<string, ScriptCall>)[
        script.name
      ] as ScriptCall;
      return await call.call(this.client, ...args);
    } catch (error) {
      throw storeErrorOf(error, what);
    }
  }

  /** Runs a plain command (a read), with the same checks and errors as a script. */
  async command<T>(run: () => Promise<T>, what: string): Promise<T> {
    if (this.#closed) {
      throw new RedisStoreError("ERR_REDIS_CLOSED", `The ${what} was used after close()`);
    }
    try {
      await this.#checkVersion();
      return await run();
    } catch (error) {
      throw storeErrorOf(error, what);
    }
  }

  #checkVersion(): Promise<void> {
    this.#checked ??= (async () => {
      const version = redisVersionOf(await this.client.info("server"));
      if (version === undefined || !versionAtLeast(version, MIN_REDIS_VERSION)) {
        throw new RedisStoreError(
          "ERR_REDIS_VERSION",
          `Redis ${version ?? "of unknown version"} is too old: @telepace/redis needs ${MIN_REDIS_VERSION} or newer; upgrade the server`,
        );
      }
    })();
    // A failed check (Redis down) is tried again on the next call; a wrong version stays.
    this.#checked.catch((error: unknown) => {
      if (!(error instanceof RedisStoreError)) this.#checked = undefined;
    });
    return this.#checked;
  }

  /** Quits a client we created; leaves a given one alone. Idempotent. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    if (this.#owned) {
      await this.client.quit().catch(() => this.client.disconnect());
    }
  }
}
