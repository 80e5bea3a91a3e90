// The README's example (examples/prometheus.ts, shown verbatim there) run as a user runs it, in a
// child process: it keeps serving /metrics — the 429 it provoked included — until SIGTERM, then
// stops cleanly.

import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { fileURLToPath } from "node:url";
import { eventually } from "@telepace/testing";
import { afterEach, describe, expect, it } from "vitest";

const example = fileURLToPath(new URL("../examples/prometheus.ts", import.meta.url));
let child: ChildProcess | undefined;

afterEach(() => {
  // A test that failed half-way leaves no server behind.
  if (child?.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
});

async function scrape(url: string): Promise<{ status: number; body: string }> {
  const response = await fetch(url);
  return { status: response.status, body: await response.text() };
}

describe("examples/prometheus.ts", () => {
  it("serves /metrics until it is stopped, then exits 0", { timeout: 30_000 }, async () => {
    let stdout = "";
    let stderr = "";
    child = spawn(process.execPath, ["--conditions=@telepace/source", "--import", "tsx", example], {
      env: { ...process.env, METRICS_PORT: "0" }, // a free port, which it prints
      stdio: ["ignore", "pipe", "pipe"],
    });
    child.stdout?.on("data", (chunk: Buffer) => {
      stdout += chunk.toString();
    });
    child.stderr?.on("data", (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    const exited = once(child, "exit");
    await eventually("the example says where it serves", () => stdout.includes("\n"), {
      timeoutMs: 20_000,
    });
    const serving = /^Serving (http:\/\/localhost:(\d+)\/metrics); Ctrl-C stops it\.\n$/.exec(
      stdout,
    );
    expect(serving?.[2]).not.toBe("0");
    const url = serving?.[1] ?? "";

    // Still serving after the traffic it made: the 429 (retried after 1 s) and the held permit.
    await eventually(
      "the 429 is on /metrics",
      async () => /^telepace_outbox_rate_limited_total\{.*\} 1$/m.test((await scrape(url)).body),
      { timeoutMs: 10_000, intervalMs: 100 },
    );
    const { status, body } = await scrape(url);
    expect(status).toBe(200);
    expect(body).toMatch(/^telepace_intake_updates_stored_total\{.*\} 1$/m);
    expect(body).toMatch(/^telepace_media_bytes_in_flight\{.*\} 524288$/m);
    expect((await scrape(url.replace(/metrics$/, "other"))).status).toBe(404);

    child.kill("SIGTERM");
    expect(await exited).toEqual([0, null]);
    expect(stderr).toBe("");
  });
});
