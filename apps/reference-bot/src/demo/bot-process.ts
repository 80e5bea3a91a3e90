// The bot as a child process of the demo, so a scene can kill it with SIGKILL and start it again on
// the same journal: `node dist/main.js` against the sim, reporting over the supervisor channel.

import { type ChildProcess, spawn } from "node:child_process";
import { createInterface } from "node:readline";
import type { Readable } from "node:stream";
import type { LogLevel } from "../config.js";
import { SUPERVISOR_FD_ENV, type SupervisorMessage } from "../supervisor-channel.js";

/** The `ready` message a bot process sends once it polls. */
export type ReadyMessage = Extract<SupervisorMessage, { type: "ready" }>;

/** Options of {@link BotProcess.start}. */
export interface BotProcessOptions {
  readonly apiRoot: string;
  readonly token: string;
  /** The journal's directory; none for a process of several (`REDIS_URL` in `env`). */
  readonly dataDir?: string | undefined;
  readonly logLevel: LogLevel;
  /** More environment for the bot (e.g. `REDIS_URL`: never the URL in its arguments). */
  readonly env?: Readonly<Record<string, string>> | undefined;
  /** Serve metrics on this loopback port (see `--metrics-port`). @defaultValue none */
  readonly metricsPort?: number | undefined;
  /** Users allowed to /broadcast (`--admin`), and its pace (`--broadcast-rate`). @defaultValue none, 30 */
  readonly admins?: readonly number[] | undefined;
  readonly broadcastRate?: number | undefined;
  /**
   * The command that runs the bot's entry point, e.g. `[process.execPath, "dist/main.js"]`.
   * @defaultValue this process's node, its flags and its script
   */
  readonly command?: readonly string[] | undefined;
  /** Receives every message of the channel, in order. */
  readonly onMessage: (message: SupervisorMessage) => void;
}

/**
 * The options of a bot process against the demo's sim (`onMessage` aside): the sim's root and
 * token, the demo's log level and metrics port, a data directory and the command.
 */
export function demoBotOptions(
  sim: { readonly apiRoot: string; readonly token: string },
  config: { readonly logLevel: LogLevel; readonly metricsPort: number | undefined },
  dataDir: string,
  command: readonly string[] | undefined,
): Omit<BotProcessOptions, "onMessage"> {
  return {
    apiRoot: sim.apiRoot,
    token: sim.token,
    dataDir,
    logLevel: config.logLevel,
    metricsPort: config.metricsPort,
    command,
  };
}

/** How a bot process ended. */
export interface BotExit {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
}

/**
 * The bot process ended before it polled. With exit code 1 or 2 it printed why (one line on the
 * stderr it shares with the demo), so the demo ends with that code and adds nothing.
 */
export class BotExitedError extends Error {
  override readonly name = "BotExitedError";
  readonly exit: BotExit;

  constructor(exit: BotExit) {
    super(`the bot exited before it polled (${exit.signal ?? exit.code})`);
    this.exit = exit;
  }

  /** Whether the bot printed the reason itself: a configuration (2) or startup (1) failure. */
  get isExplained(): boolean {
    return this.exit.code === 1 || this.exit.code === 2;
  }
}

const CHANNEL_FD = 3;

/** A running bot process. */
export class BotProcess {
  readonly ready: ReadyMessage;
  /** Settles when the process has exited and its channel is read to the end. */
  readonly exited: Promise<BotExit>;
  readonly #child: ChildProcess;

  private constructor(child: ChildProcess, ready: ReadyMessage, exited: Promise<BotExit>) {
    this.#child = child;
    this.ready = ready;
    this.exited = exited;
  }

  /** Starts the bot and resolves once it polls; rejects if it exits before that. */
  static start(options: BotProcessOptions): Promise<BotProcess> {
    const [file, ...args] = options.command ?? [
      process.execPath,
      ...process.execArgv,
      process.argv[1] as string,
    ];
    const metrics =
      options.metricsPort === undefined ? [] : ["--metrics-port", String(options.metricsPort)];
    const dataDir = options.dataDir === undefined ? [] : ["--data-dir", options.dataDir];
    const broadcasts = [
      ...(options.admins ?? []).flatMap((id) => ["--admin", String(id)]),
      ...(options.broadcastRate === undefined
        ? []
        : ["--broadcast-rate", String(options.broadcastRate)]),
    ];
    const child = spawn(file as string, [...args, ...dataDir, ...metrics, ...broadcasts], {
      env: {
        ...process.env,
        TELEGRAM_BOT_TOKEN: options.token,
        TELEGRAM_API_ROOT: options.apiRoot,
        LOG_LEVEL: options.logLevel,
        [SUPERVISOR_FD_ENV]: String(CHANNEL_FD),
        ...options.env,
      },
      stdio: ["ignore", "ignore", "inherit", "pipe"],
    });
    const lines = createInterface({ input: child.stdio[CHANNEL_FD] as Readable });
    const channelDone = new Promise<void>((resolve) => lines.once("close", resolve));
    const exit = new Promise<BotExit>((resolve) =>
      child.once("exit", (code, signal) => resolve({ code, signal })),
    );
    const exited = Promise.all([exit, channelDone]).then(([result]) => result);
    return new Promise<BotProcess>((resolve, reject) => {
      let started = false;
      child.once("error", reject);
      lines.on("line", (line) => {
        const message = JSON.parse(line) as SupervisorMessage;
        options.onMessage(message);
        if (message.type === "ready" && !started) {
          started = true;
          resolve(new BotProcess(child, message, exited));
        }
      });
      void exited.then((exit) => {
        if (!started) reject(new BotExitedError(exit));
      });
    });
  }

  /** The process id. */
  get pid(): number {
    return this.#child.pid as number;
  }

  /** Kills the process at once (SIGKILL): nothing is flushed, finished or said. */
  async kill(): Promise<BotExit> {
    this.#child.kill("SIGKILL");
    return this.exited;
  }

  /** Asks the bot to shut down (SIGTERM) and waits for it to exit. */
  async stop(): Promise<BotExit> {
    this.#child.kill("SIGTERM");
    return this.exited;
  }
}
