// The flags of a bot run as several processes: where Redis is (REDIS_URL, a file, or `--redis`),
// the role, how fast a dead process is noticed (leases) and whether a Redis that may forget what
// it acknowledged is refused. Read before the rest of the command line, which they leave as it
// was.

import { readFileSync } from "node:fs";
import { sharedPollerDefaults, sharedUpdateWorkerDefaults } from "@telepace/redis";
import { ConfigError } from "./config.js";
import { helpSection } from "./help-text.js";

/** What one process of a bot run as several does. */
export type SharedRole = "all" | "poller" | "worker";

/** The shared-mode part of the configuration. */
export interface SharedConfig {
  readonly redisUrl: string;
  readonly role: SharedRole;
  /** A worker's lease on a person's update, and a process's on its /work jobs, in ms. */
  readonly leaseMs: number;
  /** How often those leases are renewed, in ms (below `leaseMs`). */
  readonly renewMs: number;
  /** The poller's lease, in ms (the poller renews it every third). */
  readonly pollerLeaseMs: number;
  /** Refuse to start on a Redis that may forget what it acknowledged. */
  readonly isStrict: boolean;
  /** Lines to print before the bot starts (a password in the process list). */
  readonly warnings: readonly string[];
}

/** The defaults, the library's: a dead process's people, jobs and polling move on within about 1.5 s. */
export const SHARED_DEFAULTS = Object.freeze({
  leaseMs: sharedUpdateWorkerDefaults.leaseMs,
  /** Five renewals per lease: a process counts as dead only after missing several. */
  renewalsPerLease: sharedUpdateWorkerDefaults.renewalsPerLease,
  pollerLeaseMs: sharedPollerDefaults.leaseMs,
});

export const SHARED_USAGE = helpSection(
  "Several processes (needs TELEGRAM_BOT_TOKEN, and Redis in REDIS_URL or a file):",
  [
    ["--redis-url-file <f>", "read the Redis URL from this file (or REDIS_URL_FILE)"],
    ["--redis <url>", "the Redis URL on the command line (visible in ps: prefer REDIS_URL)"],
    ["--role <role>", "all|poller|worker (default all): poll for the bot, work, or both"],
    [
      "--lease-ms <n>",
      `a worker's lease on a person, and on its /work jobs, in ms (default ${SHARED_DEFAULTS.leaseMs})`,
    ],
    [
      "--renew-ms <n>",
      `how often those leases are renewed, in ms (default lease / ${SHARED_DEFAULTS.renewalsPerLease})`,
    ],
    [
      "--poller-lease-ms <n>",
      `the poller's lease, in ms (default ${SHARED_DEFAULTS.pollerLeaseMs})`,
    ],
    [
      "--redis-strict",
      "refuse to start on a Redis that may forget what it stored",
      "(no append-only file, eviction at maxmemory)",
    ],
  ],
);

const ROLES: readonly SharedRole[] = ["all", "poller", "worker"];
const VALUED = new Set([
  "--redis",
  "--redis-url-file",
  "--role",
  "--lease-ms",
  "--renew-ms",
  "--poller-lease-ms",
]);

function milliseconds(name: string, raw: string | undefined, fallback: number, min = 100): number {
  if (raw === undefined) return fallback;
  const value = Number(raw);
  if (raw.trim() === "" || !Number.isInteger(value) || value < min || value > 600_000) {
    throw new ConfigError(`${name} must be an integer from ${min} to 600000 (ms), got "${raw}"`);
  }
  return value;
}

/** The URL in a file (a mounted secret); the path may be named, the content never. */
function urlFromFile(name: string, path: string): string {
  try {
    return readFileSync(path, "utf8").trim();
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    throw new ConfigError(
      `Cannot read ${name} ${path}${typeof code === "string" ? ` (${code})` : ""}`,
    );
  }
}

/** Whether a Redis URL holds a password (`redis://:pw@…` or `redis://user:pw@…`). */
function hasPassword(url: string): boolean {
  return /^rediss?:\/\/[^/@]*:[^/@]*@/.test(url);
}

/**
 * Takes the shared-mode flags out of `argv`.
 * @throws {ConfigError} for a bad value, or a shared-mode flag without Redis.
 */
export function readSharedConfig(
  argv: readonly string[],
  env: Readonly<Record<string, string | undefined>>,
): { readonly rest: readonly string[]; readonly shared: SharedConfig | undefined } {
  const rest: string[] = [];
  const given = new Map<string, string>();
  let isStrict = false;
  for (let index = 0; index < argv.length; index++) {
    const arg = argv[index] as string;
    const [name, inline] = arg.split("=", 2) as [string, string | undefined];
    if (name === "--redis-strict" && inline === undefined) {
      isStrict = true;
      continue;
    }
    if (!VALUED.has(name)) {
      rest.push(arg);
      continue;
    }
    const value = inline ?? argv[++index];
    if (value === undefined) throw new ConfigError(`${name} needs a value (see --help)`);
    given.set(name, value);
  }
  const warnings: string[] = [];
  const fileFlag = given.get("--redis-url-file");
  const fileEnv = env.REDIS_URL_FILE === "" ? undefined : env.REDIS_URL_FILE;
  const fromFlag = given.get("--redis");
  let redisUrl: string | undefined;
  if (fromFlag !== undefined) {
    redisUrl = fromFlag;
    if (hasPassword(fromFlag)) {
      warnings.push(
        "--redis puts the Redis password in the process list, where `ps` shows it to every user of this machine; set REDIS_URL or --redis-url-file instead",
      );
    }
  } else if (fileFlag !== undefined) {
    redisUrl = urlFromFile("--redis-url-file", fileFlag);
  } else if (env.REDIS_URL !== undefined && env.REDIS_URL !== "") {
    redisUrl = env.REDIS_URL;
  } else if (fileEnv !== undefined) {
    redisUrl = urlFromFile("REDIS_URL_FILE", fileEnv);
  }
  const role = given.get("--role");
  if (role !== undefined && !(ROLES as readonly string[]).includes(role)) {
    throw new ConfigError(`--role must be one of ${ROLES.join(", ")}, got "${role}"`);
  }
  if (redisUrl === undefined) {
    const shared = [...given.keys()].find((name) => name !== "--redis");
    const flag = isStrict ? "--redis-strict" : shared;
    if (flag !== undefined) {
      throw new ConfigError(`${flag} needs Redis: set REDIS_URL (or --redis-url-file <file>)`);
    }
    return { rest, shared: undefined };
  }
  // Never echo the URL: it may hold a password.
  if (!/^rediss?:\/\//.test(redisUrl)) {
    throw new ConfigError(
      "The Redis URL (REDIS_URL, --redis-url-file or --redis) must be a redis:// or rediss:// URL",
    );
  }
  const leaseMs = milliseconds("--lease-ms", given.get("--lease-ms"), SHARED_DEFAULTS.leaseMs);
  const renewMs = milliseconds(
    "--renew-ms",
    given.get("--renew-ms"),
    Math.round(leaseMs / SHARED_DEFAULTS.renewalsPerLease),
    10,
  );
  if (renewMs >= leaseMs) {
    throw new ConfigError(`--renew-ms (${renewMs}) must be below --lease-ms (${leaseMs})`);
  }
  return {
    rest,
    shared: Object.freeze({
      redisUrl,
      role: (role ?? "all") as SharedRole,
      leaseMs,
      renewMs,
      pollerLeaseMs: milliseconds(
        "--poller-lease-ms",
        given.get("--poller-lease-ms"),
        SHARED_DEFAULTS.pollerLeaseMs,
      ),
      isStrict,
      warnings: Object.freeze(warnings),
    }),
  };
}
