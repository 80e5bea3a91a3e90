// The flags of a bot run as several processes: `--redis <url>` (or REDIS_URL) and
// `--role all|poller|worker`. Read before the rest of the command line, which they leave as it was.

import { ConfigError } from "./config.js";
import { helpSection } from "./help-text.js";

/** What one process of a bot run as several does. */
export type SharedRole = "all" | "poller" | "worker";

/** The shared-mode part of the configuration. */
export interface SharedConfig {
  readonly redisUrl: string;
  readonly role: SharedRole;
}

export const SHARED_USAGE = helpSection("Several processes (needs TELEGRAM_BOT_TOKEN):", [
  ["--redis <url>", "share pacing and updates through Redis (or REDIS_URL)"],
  ["--role <role>", "all|poller|worker (default all): poll for the bot, work, or both"],
]);

const ROLES: readonly SharedRole[] = ["all", "poller", "worker"];

/**
 * Takes `--redis`/`--role` out of `argv`.
 * @throws {ConfigError} for a bad value, or `--role` without Redis.
 */
export function readSharedConfig(
  argv: readonly string[],
  env: Readonly<Record<string, string | undefined>>,
): { readonly rest: readonly string[]; readonly shared: SharedConfig | undefined } {
  const rest: string[] = [];
  let redisUrl = env.REDIS_URL === "" ? undefined : env.REDIS_URL;
  let role: string | undefined;
  for (let index = 0; index < argv.length; index++) {
    const arg = argv[index] as string;
    const [name, inline] = arg.split("=", 2) as [string, string | undefined];
    if (name !== "--redis" && name !== "--role") {
      rest.push(arg);
      continue;
    }
    const value = inline ?? argv[++index];
    if (value === undefined) throw new ConfigError(`${name} needs a value (see --help)`);
    if (name === "--redis") redisUrl = value;
    else role = value;
  }
  if (role !== undefined && !(ROLES as readonly string[]).includes(role)) {
    throw new ConfigError(`--role must be one of ${ROLES.join(", ")}, got "${role}"`);
  }
  if (redisUrl === undefined) {
    if (role !== undefined) throw new ConfigError("--role needs --redis <url> or REDIS_URL");
    return { rest, shared: undefined };
  }
  // Never echo the URL: it may hold a password.
  if (!/^rediss?:\/\//.test(redisUrl)) {
    throw new ConfigError("--redis / REDIS_URL must be a redis:// or rediss:// URL");
  }
  return { rest, shared: { redisUrl, role: (role ?? "all") as SharedRole } };
}
