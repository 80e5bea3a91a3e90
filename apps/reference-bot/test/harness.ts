// The end-to-end fixture: the Bot API sim on loopback (flood limits sped up by TIME_SCALE), the
// reference bot launched against it over real HTTP with its outbox sped up by the same factor, and
// a pino logger writing into memory so a test can read every line the bot logged.

import { type ChildProcess, spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import type { InlineKeyboardMarkup, Message } from "@grammyjs/types";
import { type BotApiSim, type BotApiSimOptions, type ChatRef, start } from "@telepace/bot-api-sim";
import { eventually as waitUntil } from "@telepace/testing";
import type { Logger } from "pino";
import { createLogger } from "../src/logger.js";
import { ReferenceBot, type ReferenceBotOptions } from "../src/reference-bot.js";

/** How much faster than Telegram the sim's flood limits and the bot's outbox both run. */
export const TIME_SCALE = 20;

/** The bot's outbox at Telegram's limits (and its backoff after 5xx), sped up by {@link TIME_SCALE}. */
export const SCALED_OUTBOX = Object.freeze({
  privateChatRps: 1 * TIME_SCALE,
  groupChatRps: (20 / 60) * TIME_SCALE,
  globalRps: 30 * TIME_SCALE,
  retryBaseDelayMs: 1_000 / TIME_SCALE,
  retryMaxDelayMs: 30_000 / TIME_SCALE,
});

/** Real-time budget of one wait for a reply; generous because the machine may be loaded. */
export const REPLY_TIMEOUT_MS = 20_000;

/** Timeout of an end-to-end test (real I/O on a loaded machine). */
export const E2E_TIMEOUT_MS = 30_000;

/** A pino destination that keeps every line in memory. */
export class MemoryLog {
  readonly lines: string[] = [];

  write(line: string): void {
    this.lines.push(line);
  }

  /** Every line joined, to search for a string anywhere in the output. */
  get text(): string {
    return this.lines.join("");
  }

  /** The lines parsed as JSON records. */
  records(): Record<string, unknown>[] {
    return this.lines.map((line) => JSON.parse(line) as Record<string, unknown>);
  }
}

/** A sim and a bot running against it; disposing stops the bot and closes the sim. */
export interface Fixture extends AsyncDisposable {
  readonly sim: BotApiSim;
  readonly bot: ReferenceBot;
  readonly log: MemoryLog;
  readonly logger: Logger;
}

/** Options of {@link launchFixture}. */
export interface FixtureOptions {
  readonly sim?: BotApiSimOptions;
  readonly bot?: Partial<Omit<ReferenceBotOptions, "token" | "apiRoot" | "logger">>;
  /** Level of the in-memory logger. @defaultValue "debug" */
  readonly level?: string;
  /** Secrets the logger scrubs. @defaultValue the sim's token */
  readonly secrets?: readonly string[];
}

/** Starts the sim and launches the bot against it (short long polls, scaled outbox). */
export async function launchFixture(options: FixtureOptions = {}): Promise<Fixture> {
  const sim = await start({ timeScale: TIME_SCALE, ...options.sim });
  const log = new MemoryLog();
  const logger = createLogger(options.level ?? "debug", options.secrets ?? [sim.token], log);
  let bot: ReferenceBot;
  try {
    bot = await ReferenceBot.launch({
      token: sim.token,
      apiRoot: sim.apiRoot,
      logger,
      pollTimeoutS: 1,
      outbox: SCALED_OUTBOX,
      ...options.bot,
    });
  } catch (error) {
    await sim.close();
    throw error;
  }
  return {
    sim,
    bot,
    log,
    logger,
    async [Symbol.asyncDispose]() {
      try {
        await bot.stop({ timeoutMs: 5_000 });
      } finally {
        await sim.close({ timeoutMs: 1_000 });
      }
    },
  };
}

/** The text or caption of a message ("" when it has neither). */
export function textOf(message: Message): string {
  return (
    ("text" in message ? message.text : undefined) ??
    ("caption" in message ? message.caption : undefined) ??
    ""
  );
}

/** The callback data of a message's first inline button (a /work job's Cancel). */
export function cancelData(message: Message): string | undefined {
  const markup = (message as { reply_markup?: InlineKeyboardMarkup }).reply_markup;
  const button = markup?.inline_keyboard[0]?.[0];
  return button !== undefined && "callback_data" in button ? button.callback_data : undefined;
}

/** Waits for the bot's next message in `chat` after the message `after` that satisfies `predicate`. */
export function replyTo(
  sim: BotApiSim,
  chat: ChatRef,
  after: { readonly message_id: number },
  predicate: (message: Message) => boolean,
): Promise<Message> {
  return sim.waitForMessage(chat, predicate, {
    afterMessageId: after.message_id,
    timeoutMs: REPLY_TIMEOUT_MS,
  });
}

/** SHA-256 of `bytes` as lower-case hex. */
export function sha256(bytes: Uint8Array): string {
  return createHash("sha256").update(bytes).digest("hex");
}

/** Downloads a file from the sim as a client would (getFile, then the file route). */
export async function downloadFromSim(sim: BotApiSim, fileId: string): Promise<Uint8Array> {
  const info = await fetch(
    `${sim.apiRoot}/bot${sim.token}/getFile?file_id=${encodeURIComponent(fileId)}`,
  );
  const body = (await info.json()) as { ok: boolean; result?: { file_path?: string } };
  const path = body.result?.file_path;
  if (!body.ok || path === undefined) throw new Error(`getFile failed for ${fileId}`);
  const file = await fetch(`${sim.apiRoot}/file/bot${sim.token}/${path}`);
  return new Uint8Array(await file.arrayBuffer());
}

/** The text of every message the bot sent into the chat that matches `pattern`, in order. */
export function botSendsMatching(sim: BotApiSim, chat: ChatRef, pattern: RegExp): string[] {
  return sim
    .transcript(chat)
    .events.filter((event) => event.actor === "bot" && event.kind === "send")
    .map((event) => event.text ?? "")
    .filter((text) => pattern.test(text));
}

/** `eventually` of `@telepace/testing` with the bot's reply timeout, for state reached by real I/O. */
export function eventually(what: string, check: () => boolean | Promise<boolean>): Promise<void> {
  return waitUntil(what, check, { timeoutMs: REPLY_TIMEOUT_MS, intervalMs: 10 });
}

/** Runs the bot's entry point from source in a child process (no build needed). */
export const BOT_COMMAND: readonly string[] = [
  process.execPath,
  "--conditions=@telepace/source",
  "--import",
  "tsx",
  fileURLToPath(new URL("../src/main.ts", import.meta.url)),
];

/** The bot's entry point running in a child process (see {@link spawnBot}). */
export interface BotChild {
  readonly child: ChildProcess;
  /** Resolves with the exit code (null when a signal ended it). */
  readonly exited: Promise<number | null>;
  /**
   * The first line on the bot's stderr that matches `pattern` (lines already printed count);
   * rejects, with what it printed, if the bot exits first.
   */
  line(pattern: RegExp): Promise<RegExpExecArray>;
  /** Every line printed on stderr so far. */
  readonly printed: readonly string[];
}

/**
 * Runs {@link BOT_COMMAND} with `args` against `sim` (logs silent, unless `env` says otherwise),
 * reading its stderr.
 */
export function spawnBot(
  sim: BotApiSim,
  args: readonly string[],
  env: Readonly<Record<string, string>> = {},
): BotChild {
  const [file, ...command] = BOT_COMMAND;
  const child = spawn(file as string, [...command, ...args], {
    env: {
      ...process.env,
      TELEGRAM_BOT_TOKEN: sim.token,
      TELEGRAM_API_ROOT: sim.apiRoot,
      LOG_LEVEL: "silent",
      ...env,
    },
    stdio: ["ignore", "ignore", "pipe"],
  });
  const exited = new Promise<number | null>((resolve) => child.once("exit", resolve));
  const printed: string[] = [];
  const lines = createInterface({ input: child.stderr as NodeJS.ReadableStream });
  lines.on("line", (line) => printed.push(line));
  return {
    child,
    exited,
    printed,
    line(pattern) {
      return new Promise((resolve, reject) => {
        const check = (line: string): boolean => {
          const match = pattern.exec(line);
          if (match !== null) resolve(match);
          return match !== null;
        };
        if (printed.some(check)) return;
        lines.on("line", check);
        void exited.then((code) =>
          reject(
            new Error(`the bot exited (${code}) before printing ${pattern}: ${printed.join("\n")}`),
          ),
        );
      });
    },
  };
}

/** What the bot prints once it serves metrics; group 1 is the URL. */
export const METRICS_LINE = /^Metrics: (http:\/\/127\.0\.0\.1:\d+\/metrics)$/;
