// The several-processes demo as the README runs it (pnpm passes its `--` on): every process serves
// before the crowd writes, one is killed with SIGKILL while it runs a job, and the report shows
// every reply once and in order, every Cancel press honoured and the job of the killed process
// ended by another, with exit code 0.

import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { describeWithRedis } from "@telepace/testing";
import { expect, it } from "vitest";
import { unreconciled } from "../src/demo/report.js";

const DEMO = fileURLToPath(new URL("../src/demo/processes-demo.ts", import.meta.url));

function runDemo(env: NodeJS.ProcessEnv, args: readonly string[]) {
  const child = spawn(
    process.execPath,
    ["--conditions=@telepace/source", "--import", "tsx", DEMO, ...args],
    { env, stdio: ["ignore", "pipe", "pipe"] },
  );
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (chunk: Buffer) => {
    stdout += chunk.toString();
  });
  child.stderr.on("data", (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  return new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) =>
    child.once("exit", (code) => resolve({ code, stdout, stderr })),
  );
}

describeWithRedis("demo:processes", (server) => {
  it("kills a process mid-job after all serve, and reports every reply once, in order", async () => {
    const { code, stdout, stderr } = await runDemo({ ...process.env, REDIS_URL: server().url }, [
      "--",
      "--processes",
      "2",
      "--users",
      "6",
      "--messages",
      "3",
    ]);
    expect({ code, stderr: code === 0 ? "" : stderr }).toEqual({ code: 0, stderr: "" });
    expect(stdout).toMatch(/ 2 processes on one Redis \(report, /);
    expect(stdout).toMatch(/updates {15}(\d+) sent to the bot = \1 handled \+ 0 lost/);
    expect(stdout).toMatch(/replies delivered {5}(\d+)\/\1 expected/);
    expect(stdout).toMatch(/order {17}0 chats answered out of order/);
    expect(stdout).toMatch(/cancels {15}1 Cancel presses = 1 honoured/);
    expect(stdout).toMatch(/ended by another process after the kill \(1 user told\)/);
    expect(stdout).toMatch(/kill {18}SIGKILL of process [12] \(pid \d+/);
    // Every wait after the kill ended (a killed poller's polling too: someone writes after it).
    expect(stdout).not.toMatch(/never/);
    expect(stdout).toMatch(/429s received {9}0 \(target 0\)/);
    expect(stdout).toContain("result                every expected reply arrived");
    expect(unreconciled(stdout)).toEqual([]);
    // The URL went to the processes in their environment, never on a command line.
    expect(stderr).not.toContain(server().url);
  }, 120_000);
});
