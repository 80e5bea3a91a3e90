// How each package's first example runs once the packed check has compiled it: to its end, as a
// bot a simulated user writes to, or as a server that is scraped — against a fresh
// @telepace/bot-api-sim loaded from its tarball, the Telegram variables pointing at it (and
// REDIS_URL at a fresh redis-server where the example needs one). Every run must end with exit code 0 and print nothing on stderr; bots and servers are stopped with
// SIGTERM, as Ctrl-C would.

import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
// The test harness's server (from source: the scripts have no workspace dependencies).
import { type RedisTestServer, startRedis } from "../packages/testing/src/redis-server.js";

/** How one example is run and what makes it pass. */
export type RunPlan =
  /** Runs to its end; its stdout must match. With `file`, TELEGRAM_FILE_ID names a 1.3 MB document. */
  | { readonly kind: "exits"; readonly stdout: RegExp; readonly file?: boolean }
  /**
   * Polls until SIGTERM; a user says `say` in a private chat and a bot message must match `reply`.
   * With `redis`, REDIS_URL names a fresh redis-server from PATH.
   */
  | { readonly kind: "bot"; readonly say: string; readonly reply: RegExp; readonly redis?: boolean }
  /**
   * Serves until SIGTERM on METRICS_PORT=0 (a free port); the first URL it prints must answer
   * 200 with a matching body.
   */
  | { readonly kind: "server"; readonly body: RegExp };

/** The plan of each published package's first example, by the package's folder name. */
export const runPlans: Readonly<Record<string, RunPlan>> = {
  core: { kind: "exits", stdout: /^paused 1000 ms on the manual clock\n3 of 4 slots free\n$/ },
  outbox: { kind: "exits", stdout: /^(superseded\n){3}delivered\n$/ },
  client: { kind: "bot", say: "hello", reply: /^Done: hello$/ },
  "update-dispatch": { kind: "bot", say: "hello", reply: /^You said: hello$/ },
  "journal-file": { kind: "bot", say: "hello", reply: /^Stored: hello$/ },
  "media-scheduler": { kind: "exits", stdout: /^1300000 bytes in 3 ranges\n$/, file: true },
  "bot-api-sim": { kind: "exits", stdout: /^Welcome!\n$/ },
  grammy: { kind: "bot", say: "/start", reply: /\/work/ },
  metrics: { kind: "server", body: /^telepace_outbox_queue_depth\{/m },
  broadcast: { kind: "exits", stdout: /^completed \{"sent":1,/ },
  redis: { kind: "bot", say: "hello", reply: /^You said: hello$/, redis: true },
};

interface SimMessage {
  readonly message_id: number;
  readonly text?: string;
  readonly document?: { readonly file_id: string };
}

/** What the runs use of @telepace/bot-api-sim (loaded from the tarball, so typed here). */
export interface Sim {
  readonly token: string;
  readonly apiRoot: string;
  readonly users: { create(options: { firstName: string }): { readonly id: number } };
  readonly chats: { createPrivate(user: { readonly id: number }): { readonly id: number } };
  sendText(user: { readonly id: number }, chat: { readonly id: number }, text: string): SimMessage;
  sendDocument(
    user: { readonly id: number },
    chat: { readonly id: number },
    file: { readonly bytes: Uint8Array; readonly fileName: string },
  ): SimMessage;
  waitForMessage(
    chat: { readonly id: number },
    predicate: (message: SimMessage) => boolean,
    options: { readonly afterMessageId: number; readonly timeoutMs: number },
  ): Promise<SimMessage>;
  close(): Promise<void>;
}

const RUN_TIMEOUT_MS = 30_000;
const STOP_TIMEOUT_MS = 15_000;

/** The run of one compiled example: started, then awaited, read or stopped. */
class ExampleProcess {
  stdout = "";
  stderr = "";
  readonly exited: Promise<{ code: number | null; signal: string | null }>;
  readonly #kill: (signal: NodeJS.Signals) => void;

  constructor(node: string, script: string, env: NodeJS.ProcessEnv, cwd: string) {
    const child = spawn(node, [script], { cwd, env, stdio: ["ignore", "pipe", "pipe"] });
    child.stdout.on("data", (chunk: Buffer) => {
      this.stdout += chunk.toString();
    });
    child.stderr.on("data", (chunk: Buffer) => {
      this.stderr += chunk.toString();
    });
    this.exited = new Promise((resolve) => {
      child.once("close", (code, signal) => resolve({ code, signal }));
    });
    this.#kill = (signal) => child.kill(signal);
  }

  /** Resolves with how it exited, or kills it (SIGKILL) and says so after `timeoutMs`. */
  async end(timeoutMs: number): Promise<string | undefined> {
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<"timeout">((resolve) => {
      timer = setTimeout(() => resolve("timeout"), timeoutMs);
    });
    const exit = await Promise.race([this.exited, timedOut]);
    clearTimeout(timer);
    if (exit === "timeout") {
      this.#kill("SIGKILL");
      await this.exited;
      return `did not exit within ${timeoutMs / 1000} s`;
    }
    if (exit.code !== 0) return `exited with ${exit.signal ?? exit.code}`;
    return this.stderr === "" ? undefined : "wrote to stderr";
  }

  /** SIGTERM, then {@link end}. */
  stop(): Promise<string | undefined> {
    this.#kill("SIGTERM");
    return this.end(STOP_TIMEOUT_MS);
  }

  /**
   * Waits for `ready` (a reply, a scrape), then stops the process with SIGTERM; when the process
   * exits first, or `ready` fails, says so (and kills the process if it still runs).
   */
  async stopWhen(ready: Promise<unknown>, what: string): Promise<string | undefined> {
    const first = await Promise.race([
      ready.then(
        () => "ready" as const,
        (error: unknown) => (error instanceof Error ? error : new Error(String(error))),
      ),
      this.exited.then(({ code, signal }) => `exited with ${signal ?? code} before ${what}`),
    ]);
    if (first === "ready") return this.stop();
    if (typeof first === "string") return first;
    this.#kill("SIGKILL");
    await this.exited;
    return `${first.message} (${what})`;
  }
}

/** Waits for the first URL `printed()` shows, then for it to answer 200 with a matching body. */
async function scrape(printed: () => string, body: RegExp): Promise<void> {
  const deadline = performance.now() + RUN_TIMEOUT_MS;
  for (;;) {
    const url = /https?:\/\/[^\s;,]+/.exec(printed())?.[0];
    try {
      const response = url === undefined ? undefined : await fetch(url);
      if (response?.status === 200 && body.test(await response.text())) return;
    } catch {
      // Not listening yet.
    }
    if (performance.now() > deadline) {
      throw new Error(`no matching answer from ${url ?? "a URL it printed"}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/**
 * Runs the compiled example `script` with `node` as `plan` says, against a fresh simulator.
 * @returns undefined when it passed, else what went wrong (with its stderr).
 */
export async function runExample(
  node: string,
  script: string,
  plan: RunPlan,
  startSim: () => Promise<Sim>,
): Promise<string | undefined> {
  const sim = await startSim();
  const scratch = mkdtempSync(join(tmpdir(), "telepace-example-run-"));
  let run: ExampleProcess | undefined;
  let redis: RedisTestServer | undefined;
  try {
    const user = sim.users.create({ firstName: "Ada" });
    const chat = sim.chats.createPrivate(user);
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      TELEGRAM_BOT_TOKEN: sim.token,
      TELEGRAM_API_ROOT: sim.apiRoot,
      TELEGRAM_CHAT_ID: String(chat.id),
      JOURNAL_DIR: join(scratch, "journal"),
    };
    if (plan.kind === "exits" && plan.file === true) {
      const sent = sim.sendDocument(user, chat, {
        bytes: randomBytes(1_300_000),
        fileName: "notes.bin",
      });
      env.TELEGRAM_FILE_ID = sent.document?.file_id;
    }
    if (plan.kind === "server") env.METRICS_PORT = "0";
    if (plan.kind === "bot" && plan.redis === true) {
      redis = await startRedis();
      env.REDIS_URL = redis.url;
    }
    run = new ExampleProcess(node, script, env, scratch);
    let problem: string | undefined;
    if (plan.kind === "exits") {
      problem = await run.end(RUN_TIMEOUT_MS);
      if (problem === undefined && !plan.stdout.test(run.stdout)) {
        problem = `printed ${JSON.stringify(run.stdout)}, expected ${plan.stdout}`;
      }
    } else if (plan.kind === "bot") {
      const said = sim.sendText(user, chat, plan.say);
      const reply = sim.waitForMessage(chat, (message) => plan.reply.test(message.text ?? ""), {
        afterMessageId: said.message_id,
        timeoutMs: RUN_TIMEOUT_MS,
      });
      problem = await run.stopWhen(reply, `answering ${JSON.stringify(plan.say)}`);
    } else {
      const output = run;
      problem = await run.stopWhen(
        scrape(() => output.stdout, plan.body),
        "serving",
      );
    }
    return problem === undefined ? undefined : `${problem}${stderrTail(run.stderr)}`;
  } finally {
    await sim.close();
    await redis?.stop();
    rmSync(scratch, { recursive: true, force: true });
  }
}

/** The gist of what a failed run printed: its lines without the stack frames, the first few. */
function stderrTail(stderr: string): string {
  const lines = stderr.split("\n").filter((line) => line.trim() !== "" && !/^\s+at /.test(line));
  return lines.length === 0 ? "" : `; stderr: ${lines.slice(0, 5).join(" | ")}`;
}
