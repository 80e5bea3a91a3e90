// Command-line arguments of telepace-bot-api-sim, parsed into start() options or a clear usage
// error — never an exception.

import { parseArgs } from "node:util";
import type { BotApiSimOptions } from "../options.js";
import { checkToken } from "../wire/token.js";

/** Default port of the CLI (the real local Bot API server's). */
export const CLI_DEFAULT_PORT = 8081;

/** The usage text. */
export const USAGE = `Usage: telepace-bot-api-sim [options]

A Telegram Bot API simulator on loopback. Prints its apiRoot, token, control URL and the URL of
its chat page (open it in a browser to talk to your bot), then runs until SIGINT or SIGTERM.

Options:
  -p, --port <n>        TCP port (0 picks a free one)            [default: ${CLI_DEFAULT_PORT}]
      --host <address>  loopback address: 127.0.0.1, ::1, localhost [default: 127.0.0.1]
      --allow-non-loopback  let --host be any address (0.0.0.0, a LAN address): whoever
                        reaches the port can then read every chat and act as any user
  -t, --token <token>   bot token "<bot id>:<secret>", the secret 30 or more of
                        A-Z a-z 0-9 _ - as @BotFather issues it; repeat for more bots
                                                                 [default: a random token]
      --time-scale <x>  run Telegram's flood limits x times faster [default: 1]
      --no-rate-limits  turn Telegram's flood limits off
      --no-range        ignore Range on file downloads (always 200)
      --json            print one JSON line instead of text
  -h, --help            show this help
  -v, --version         show the version`;

/** What the command line asks for. */
export type CliCommand =
  | { readonly kind: "help" }
  | { readonly kind: "version" }
  | { readonly kind: "run"; readonly options: BotApiSimOptions; readonly json: boolean }
  | { readonly kind: "error"; readonly message: string };

const OPTIONS = {
  port: { type: "string", short: "p" },
  host: { type: "string" },
  "allow-non-loopback": { type: "boolean" },
  token: { type: "string", short: "t", multiple: true },
  "time-scale": { type: "string" },
  "no-rate-limits": { type: "boolean" },
  "no-range": { type: "boolean" },
  json: { type: "boolean" },
  help: { type: "boolean", short: "h" },
  version: { type: "boolean", short: "v" },
} as const;

function parse(argv: readonly string[]) {
  return parseArgs({ args: [...argv], options: OPTIONS, strict: true, allowPositionals: false });
}

function numberArg(name: string, text: string, integer: boolean): number | string {
  const value = Number(text);
  if (text.trim() === "" || !Number.isFinite(value) || (integer && !Number.isInteger(value))) {
    return `--${name} expects ${integer ? "an integer" : "a number"}, got ${JSON.stringify(text)}`;
  }
  return value;
}

/** Parses `process.argv.slice(2)`. */
export function parseCliArgs(argv: readonly string[]): CliCommand {
  let values: ReturnType<typeof parse>["values"];
  try {
    values = parse(argv).values;
  } catch (error) {
    return { kind: "error", message: (error as Error).message };
  }
  if (values.help === true) return { kind: "help" };
  if (values.version === true) return { kind: "version" };
  const options: { -readonly [K in keyof BotApiSimOptions]: BotApiSimOptions[K] } = {};
  const port = numberArg("port", values.port ?? String(CLI_DEFAULT_PORT), true);
  if (typeof port === "string") return { kind: "error", message: port };
  if (port < 0 || port > 65535)
    return { kind: "error", message: `--port must be 0–65535, got ${port}` };
  options.port = port;
  const allowNonLoopback = values["allow-non-loopback"] === true;
  if (values.host !== undefined) {
    if (!allowNonLoopback && !["127.0.0.1", "::1", "localhost"].includes(values.host)) {
      return {
        kind: "error",
        message: `--host must be a loopback address unless --allow-non-loopback is given, got ${JSON.stringify(values.host)}`,
      };
    }
    options.host = values.host;
  }
  if (allowNonLoopback) options.allowNonLoopback = true;
  if (values["time-scale"] !== undefined) {
    const scale = numberArg("time-scale", values["time-scale"], false);
    if (typeof scale === "string") return { kind: "error", message: scale };
    if (!(scale > 0 && scale <= 10_000)) {
      return { kind: "error", message: `--time-scale must be > 0 and <= 10000, got ${scale}` };
    }
    options.timeScale = scale;
  }
  const tokens = values.token ?? [];
  for (const [index, token] of tokens.entries()) {
    try {
      checkToken(`--token #${index + 1}`, token);
    } catch (error) {
      return { kind: "error", message: (error as Error).message };
    }
  }
  if (tokens.length > 0) options.bots = tokens.map((token) => ({ token }));
  if (values["no-rate-limits"] === true) options.rateLimits = false;
  if (values["no-range"] === true) options.rangeRequests = false;
  return { kind: "run", options, json: values.json === true };
}
