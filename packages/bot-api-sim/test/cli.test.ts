// The telepace-bot-api-sim command, black-box as a new user would drive it: start it, call getMe
// in each encoding, provoke the common errors, long-poll while a user writes through the HTTP
// control API, burst into one chat, then stop it with SIGTERM. Also its argument parsing.

import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { fileURLToPath } from "node:url";
import { request } from "undici";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CLI_DEFAULT_PORT, parseCliArgs } from "../src/cli/cli-args.js";
import type { BotApiSim } from "../src/index.js";
import { agent, call } from "./helpers.js";

const CLI = fileURLToPath(new URL("../src/cli/cli.ts", import.meta.url));
const TOKEN = "123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw-";

function launch(args: string[]): ChildProcess {
  return spawn(
    process.execPath,
    ["--conditions=@telepace/source", "--import", "tsx", CLI, ...args],
    {
      cwd: fileURLToPath(new URL("..", import.meta.url)),
      stdio: ["ignore", "pipe", "pipe"],
    },
  );
}

async function collect(
  child: ChildProcess,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  let stdout = "";
  let stderr = "";
  child.stdout?.on("data", (chunk) => {
    stdout += chunk;
  });
  child.stderr?.on("data", (chunk) => {
    stderr += chunk;
  });
  const [code] = (await once(child, "exit")) as [number | null];
  return { code, stdout, stderr };
}

describe("parseCliArgs", () => {
  it("maps flags to start() options", () => {
    expect(
      parseCliArgs([
        "--port",
        "0",
        "--token",
        TOKEN,
        "--time-scale",
        "20",
        "--no-rate-limits",
        "--no-range",
        "--json",
      ]),
    ).toEqual({
      kind: "run",
      json: true,
      options: {
        port: 0,
        bots: [{ token: TOKEN }],
        timeScale: 20,
        rateLimits: false,
        rangeRequests: false,
      },
    });
    expect(parseCliArgs([])).toEqual({
      kind: "run",
      json: false,
      options: { port: CLI_DEFAULT_PORT },
    });
    const other = "42:AAF-another_secret-of-thirty-five-ch";
    expect(parseCliArgs(["-t", TOKEN, "-t", other])).toMatchObject({
      options: { bots: [{ token: TOKEN }, { token: other }] },
    });
    expect(parseCliArgs(["--host", "0.0.0.0", "--allow-non-loopback"])).toMatchObject({
      options: { host: "0.0.0.0", allowNonLoopback: true },
    });
    expect(parseCliArgs(["--help"])).toEqual({ kind: "help" });
    expect(parseCliArgs(["-v"])).toEqual({ kind: "version" });
  });

  it.each([
    [["--bogus"], "Unknown option '--bogus'"],
    [["--port", "abc"], '--port expects an integer, got "abc"'],
    [["--port", "70000"], "--port must be 0–65535, got 70000"],
    [["--time-scale", "0"], "--time-scale must be > 0 and <= 10000, got 0"],
    [
      ["--host", "0.0.0.0"],
      '--host must be a loopback address unless --allow-non-loopback is given, got "0.0.0.0"',
    ],
    [["--token", "nonsense"], "Expected `--token #1` to be a bot token, <bot id>:<secret>"],
    // Telegram never issues a secret this short; the reference bot refuses it with the same rule.
    [
      ["--token", "123456:TESTsecretABCdef"],
      "Expected `--token #1` to be a bot token, <bot id>:<secret> as @BotFather issues it (digits, a colon, then 30 or more of A-Z a-z 0-9 _ -); got a string of length 23",
    ],
    [["--port"], "argument missing"],
    [["stray"], "positional argument"],
  ])("refuses %j with a clear message", (args, message) => {
    const command = parseCliArgs(args);
    expect(command.kind).toBe("error");
    expect((command as { message: string }).message).toContain(message);
  });
});

describe("the command", () => {
  let child: ChildProcess;
  let output: Promise<{ code: number | null; stdout: string; stderr: string }>;
  let sim: Pick<BotApiSim, "apiRoot" | "token" | "controlRoot" | "pageUrl">;

  beforeAll(async () => {
    child = launch(["--port", "0", "--token", TOKEN]);
    output = collect(child);
    let text = "";
    for await (const chunk of child.stdout as AsyncIterable<Buffer>) {
      text += chunk.toString();
      if (text.includes("page ")) break;
    }
    const lines = Object.fromEntries(
      text
        .trim()
        .split("\n")
        .map((line) => line.split(" ") as [string, string]),
    );
    sim = {
      apiRoot: lines.apiRoot as string,
      token: lines.token as string,
      controlRoot: lines.control as string,
      pageUrl: lines.page as string,
    };
  }, 30_000);

  afterAll(() => {
    if (child.exitCode === null) child.kill("SIGKILL");
  });

  const api = (method: string, params: Record<string, unknown> = {}, options = {}) =>
    call(sim as unknown as BotApiSim, method, params, options);
  const controlPost = async (path: string, body: Record<string, unknown>) => {
    const response = await request(`${sim.controlRoot}${path}`, {
      method: "POST",
      dispatcher: agent,
      headers: { "content-type": "application/json" },
      body: JSON.stringify(body),
    });
    return ((await response.body.json()) as { result: { id: number } }).result;
  };
  const isPolling = async () => {
    const response = await request(`${sim.controlRoot}/state`, { dispatcher: agent });
    return ((await response.body.json()) as { result: { bots: Array<{ isPolling: boolean }> } })
      .result.bots[0]?.isPolling;
  };

  it("prints its apiRoot, token, control URL and page URL", () => {
    expect(sim.apiRoot).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(sim.token).toBe(TOKEN);
    expect(sim.controlRoot).toBe(`${sim.apiRoot}/_sim`);
    expect(sim.pageUrl).toBe(`${sim.apiRoot}/`);
  });

  it("answers getMe in every encoding and the common errors", async () => {
    for (const encoding of ["query", "form", "json", "multipart"] as const) {
      const reply = await api("getMe", {}, { encoding });
      expect(reply.body.result).toMatchObject({ id: 123456789, is_bot: true });
    }
    expect((await api("getMe", {}, { token: "123456789:wrong" })).status).toBe(401);
    expect((await api("getMee")).body.description).toBe("Not Found: method not found");
    const user = await controlPost("/users", {});
    const chat = await controlPost("/chats/private", { user_id: user.id });
    expect((await api("sendMessage", { chat_id: chat.id })).body.description).toBe(
      "Bad Request: message text is empty",
    );
    const malformed = await request(`${sim.apiRoot}/bot${sim.token}/sendMessage`, {
      method: "POST",
      dispatcher: agent,
      headers: { "content-type": "application/json" },
      body: '{"chat_id": 1,',
    });
    expect(malformed.statusCode).toBe(400);
    expect(((await malformed.body.json()) as { description: string }).description).toMatch(
      /^Bad Request: /,
    );
  });

  it("long-polls until a user writes, and limits a burst into one chat", async () => {
    const user = await controlPost("/users", {});
    const chat = await controlPost("/chats/private", { user_id: user.id });
    const poll = api("getUpdates", { timeout: 20, offset: -1 });
    while (!(await isPolling())) await new Promise((resolve) => setTimeout(resolve, 5));
    await controlPost("/messages/text", {
      user_id: user.id,
      chat_id: chat.id,
      text: "are you there?",
    });
    const updates = (await poll).body.result;
    expect(updates.at(-1).message.text).toBe("are you there?");
    const statuses = [];
    for (let i = 0; i < 6; i++)
      statuses.push((await api("sendMessage", { chat_id: chat.id, text: `${i}` })).status);
    expect(statuses).toContain(429);
    const limited = await api("sendMessage", { chat_id: chat.id, text: "again" });
    expect(limited.body.parameters.retry_after).toBeGreaterThan(0);
    expect(limited.headers["retry-after"]).toBeDefined();
  });

  it("stops on SIGTERM with exit code 0", async () => {
    child.kill("SIGTERM");
    const { code, stderr } = await output;
    expect(code).toBe(0);
    expect(stderr).toBe("");
  }, 20_000);
});

describe("--json and SIGINT", () => {
  it("prints one JSON line with every token and stops on SIGINT with exit code 0", async () => {
    const second = "987654321:BBHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw-";
    const child = launch(["--port", "0", "--json", "-t", TOKEN, "-t", second]);
    const output = collect(child);
    let text = "";
    for await (const chunk of child.stdout as AsyncIterable<Buffer>) {
      text += chunk.toString();
      if (text.includes("\n")) break;
    }
    const line = JSON.parse(text) as {
      apiRoot: string;
      controlRoot: string;
      pageUrl: string;
      tokens: string[];
    };
    expect(line.tokens).toEqual([TOKEN, second]);
    expect(line.pageUrl).toBe(`${line.apiRoot}/`);
    const me = await call(line as unknown as BotApiSim, "getMe", {}, { token: second });
    expect(me.body.result.id).toBe(987654321);
    child.kill("SIGINT");
    expect((await output).code).toBe(0);
  }, 30_000);
});

describe("bad flags", () => {
  it("prints the usage and exits with 2 instead of crashing", async () => {
    const { code, stdout, stderr } = await collect(launch(["--port", "nope"]));
    expect(code).toBe(2);
    expect(stdout).toBe("");
    expect(stderr).toContain('--port expects an integer, got "nope"');
    expect(stderr).toContain("Usage: telepace-bot-api-sim");
  }, 30_000);
});
