// The bot's configuration: the environment says where the Bot API is, the command line says how the
// embedded demo runs. Every bad value is one clear line, and the token never appears in it.

import { resolve } from "node:path";
import { parseArgs } from "node:util";
import { BOT_TOKEN_SHAPE, isBotToken } from "@telepace/bot-api-sim";
import { helpSection } from "./help-text.js";

/** Pino level names the bot accepts. */
export const LOG_LEVELS = ["fatal", "error", "warn", "info", "debug", "trace", "silent"] as const;
/** One of {@link LOG_LEVELS}. */
export type LogLevel = (typeof LOG_LEVELS)[number];

/** Where the bot talks to: the real Bot API (or a server of the user's), or the embedded sim. */
export type BotTarget =
  | { readonly kind: "api"; readonly token: string; readonly apiRoot: string }
  | { readonly kind: "embedded" };

/** How the embedded demo plays its crowd. */
export interface CrowdConfig {
  /** Seconds during which the crowd starts new conversations. */
  readonly durationS: number;
  /** Simulated users, each with a private chat. */
  readonly users: number;
  /** Simulated groups the users share. */
  readonly groups: number;
  /** Seed of the crowd's pseudo-random choices, so a run can be replayed. */
  readonly seed: number;
}

/** Everything the bot reads from its environment and command line. */
export interface BotConfig {
  readonly target: BotTarget;
  readonly logLevel: LogLevel;
  readonly crowd: CrowdConfig;
  /**
   * Directory of the durable journal, absolute. Against the API it defaults to `./.telepace`;
   * the demo uses a fresh temporary directory unless one is given.
   */
  readonly dataDir: string | undefined;
  /**
   * Serve Prometheus metrics on `http://127.0.0.1:<port>/metrics` (0: any free port); undefined:
   * no metrics endpoint. In the demo, the bot's processes serve it one after the other.
   */
  readonly metricsPort: number | undefined;
  /** Demo only: no crowd; keep the sim and the bot running for a person on the sim's chat page. */
  readonly ui: boolean;
}

/** A configuration problem, reported as one line without a stack. */
export class ConfigError extends Error {
  override readonly name = "ConfigError";
}

const DEFAULT_API_ROOT = "https://api.telegram.org";
/** The journal's directory against the API when neither --data-dir nor TELEPACE_DATA_DIR is set. */
export const DEFAULT_DATA_DIR = ".telepace";

export const USAGE = [
  `Usage: reference-bot [options]

Without TELEGRAM_BOT_TOKEN: starts the embedded Bot API sim, runs the bot against it, plays a crowd
of simulated users and prints a report. With it: runs the bot against the real Bot API until
SIGINT/SIGTERM.`,
  helpSection("Options:", [
    [
      "--data-dir <dir>",
      `the durable journal of updates and running jobs (default ./${DEFAULT_DATA_DIR}`,
      "against the API, a fresh temporary directory in the demo)",
    ],
    [
      "--log-level <level>",
      LOG_LEVELS.join("|"),
      "(default: error in the demo, info against the API)",
    ],
    [
      "--metrics-port <port>",
      "serve Prometheus metrics on http://127.0.0.1:<port>/metrics",
      "(0: a free port; default: none)",
    ],
    ["-h, --help", "this text"],
  ]),
  helpSection("Options (embedded demo):", [
    [
      "--ui",
      "no crowd: keep the sim and the bot running, print the URL of the sim's chat",
      "page to talk to the bot in a browser, and wait for Ctrl-C",
    ],
    ["--duration <s>", "seconds the crowd keeps starting conversations (default 20)"],
    ["--users <n>", "simulated users (default 6)"],
    ["--groups <n>", "simulated groups (default 2)"],
    ["--seed <n>", "seed of the crowd's choices (default 1)"],
  ]),
  helpSection("Environment:", [
    ["TELEGRAM_BOT_TOKEN", "a bot token from @BotFather: run against the Bot API"],
    [
      "TELEGRAM_API_ROOT",
      `Bot API root (default ${DEFAULT_API_ROOT};`,
      "a local Bot API server or a sim)",
    ],
    ["TELEPACE_DATA_DIR", "as --data-dir"],
    ["TELEPACE_METRICS_PORT", "as --metrics-port"],
    ["LOG_LEVEL", "as --log-level"],
  ]),
].join("\n\n");

function integerFlag(
  name: string,
  raw: string | undefined,
  fallback: number,
  min: number,
  max: number,
): number {
  if (raw === undefined) return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new ConfigError(`--${name} must be an integer from ${min} to ${max}, got "${raw}"`);
  }
  return value;
}

function parseLogLevel(raw: string | undefined, fallback: LogLevel): LogLevel {
  if (raw === undefined || raw === "") return fallback;
  const level = raw.toLowerCase();
  if (!(LOG_LEVELS as readonly string[]).includes(level)) {
    throw new ConfigError(`log level must be one of ${LOG_LEVELS.join(", ")}, got "${raw}"`);
  }
  return level as LogLevel;
}

function parseMetricsPort(
  fromFlag: string | undefined,
  fromEnv: string | undefined,
): number | undefined {
  const raw = fromFlag ?? (fromEnv === "" ? undefined : fromEnv);
  if (raw === undefined) return undefined;
  const port = Number(raw);
  if (raw.trim() === "" || !Number.isInteger(port) || port < 0 || port > 65_535) {
    const name = fromFlag === undefined ? "TELEPACE_METRICS_PORT" : "--metrics-port";
    throw new ConfigError(`${name} must be a port from 0 to 65535, got "${raw}"`);
  }
  return port;
}

function parseApiRoot(raw: string | undefined): string {
  if (raw === undefined || raw === "") return DEFAULT_API_ROOT;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ConfigError(`TELEGRAM_API_ROOT is not a URL: "${raw}"`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw new ConfigError(`TELEGRAM_API_ROOT must be an http(s) URL, got "${raw}"`);
  }
  return raw.replace(/\/+$/, "");
}

/**
 * Reads the configuration. `--help` is reported as `{ help: true }`.
 * @throws {ConfigError} with one line naming the bad value (never the token itself).
 */
export function readConfig(
  argv: readonly string[],
  env: Readonly<Record<string, string | undefined>>,
): BotConfig | { readonly help: true } {
  let parsed: ReturnType<typeof parseArgs>;
  try {
    parsed = parseArgs({
      // `pnpm start -- --users 20` forwards the "--" itself.
      args: argv[0] === "--" ? argv.slice(1) : [...argv],
      strict: true,
      allowPositionals: false,
      options: {
        duration: { type: "string" },
        users: { type: "string" },
        groups: { type: "string" },
        seed: { type: "string" },
        "log-level": { type: "string" },
        "data-dir": { type: "string" },
        "metrics-port": { type: "string" },
        ui: { type: "boolean" },
        help: { type: "boolean", short: "h" },
      },
    });
  } catch (error) {
    throw new ConfigError(`${(error as Error).message} (see --help)`);
  }
  const values = parsed.values as Record<string, string | boolean | undefined>;
  if (values.help === true) return { help: true };
  const flag = (name: string) => values[name] as string | undefined;

  const token = env.TELEGRAM_BOT_TOKEN?.trim();
  let target: BotTarget;
  if (token === undefined || token === "") {
    if (env.TELEGRAM_API_ROOT) {
      throw new ConfigError("TELEGRAM_API_ROOT is set but TELEGRAM_BOT_TOKEN is not");
    }
    target = { kind: "embedded" };
  } else {
    // The simulator's rule, so a token `telepace-bot-api-sim --token` takes is one the bot takes.
    if (!isBotToken(token)) {
      throw new ConfigError(
        `TELEGRAM_BOT_TOKEN is malformed: expected ${BOT_TOKEN_SHAPE}, got ${token.length} characters`,
      );
    }
    target = { kind: "api", token, apiRoot: parseApiRoot(env.TELEGRAM_API_ROOT) };
  }
  const ui = values.ui === true;
  if (ui && target.kind === "api") {
    throw new ConfigError("--ui runs the embedded sim's chat page: unset TELEGRAM_BOT_TOKEN");
  }

  const dataDir = flag("data-dir") ?? env.TELEPACE_DATA_DIR;
  if (dataDir === "") throw new ConfigError("--data-dir must not be empty");
  return {
    target,
    ui,
    metricsPort: parseMetricsPort(flag("metrics-port"), env.TELEPACE_METRICS_PORT),
    dataDir:
      dataDir !== undefined
        ? resolve(dataDir)
        : target.kind === "api"
          ? resolve(DEFAULT_DATA_DIR)
          : undefined,
    logLevel: parseLogLevel(
      flag("log-level") ?? env.LOG_LEVEL,
      target.kind === "api" ? "info" : "error",
    ),
    crowd: {
      durationS: integerFlag("duration", flag("duration"), 20, 1, 3600),
      users: integerFlag("users", flag("users"), 6, 1, 500),
      groups: integerFlag("groups", flag("groups"), 2, 0, 50),
      seed: integerFlag("seed", flag("seed"), 1, 0, 2 ** 31 - 1),
    },
  };
}
