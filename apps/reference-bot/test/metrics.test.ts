// The bot's Prometheus endpoint, opt-in: the bot runs against the sim over real HTTP, and a scrape
// of http://127.0.0.1:<port>/metrics (real HTTP too) shows the outbox's queue depth and wait, its
// 429s by scope, the intake's offset lag and fetches, dispatch outcomes and media bytes, with
// figures that match what happened and no token anywhere. From the command line as well.

import { randomBytes } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { start } from "@telepace/bot-api-sim";
import { describe, expect, it } from "vitest";
import { StartupError } from "../src/reference-bot.js";
import {
  type BotChild,
  cancelData,
  E2E_TIMEOUT_MS,
  launchFixture,
  METRICS_LINE,
  REPLY_TIMEOUT_MS,
  replyTo,
  spawnBot,
  TIME_SCALE,
} from "./harness.js";

/** The value of the first sample of `name` whose labels include every one of `labels`. */
function sample(text: string, name: string, labels: Record<string, string> = {}): number {
  for (const line of text.split("\n")) {
    if (!line.startsWith(`${name}{`) && !line.startsWith(`${name} `)) continue;
    const hasLabels = Object.entries(labels).every(([key, value]) =>
      line.includes(`${key}="${value}"`),
    );
    if (hasLabels) return Number(line.slice(line.lastIndexOf(" ") + 1));
  }
  throw new Error(`no sample ${name} ${JSON.stringify(labels)} in the scrape`);
}

async function scrape(url: string): Promise<string> {
  const response = await fetch(url);
  expect(response.status).toBe(200);
  expect(response.headers.get("content-type")).toMatch(/^text\/plain/);
  return response.text();
}

/**
 * Scrapes until the intake's offset lag is back to 0: an update counts as unfinished until the
 * journal has marked it, a moment after its reply went out.
 */
async function scrapeSettled(url: string): Promise<string> {
  const deadline = Date.now() + REPLY_TIMEOUT_MS;
  for (;;) {
    const text = await scrape(url);
    if (sample(text, "telepace_intake_offset_lag") === 0 || Date.now() > deadline) return text;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

function expectNoToken(text: string, token: string): void {
  expect(text).not.toContain(token);
  expect(text).not.toContain(token.slice(token.indexOf(":") + 1));
}

describe("the metrics endpoint", { timeout: E2E_TIMEOUT_MS }, () => {
  it("is off unless asked for", async () => {
    await using fixture = await launchFixture();
    expect(fixture.bot.metricsUrl).toBeUndefined();
  });

  it("serves the outbox, intake, dispatch and media series on loopback", async () => {
    await using fixture = await launchFixture({ bot: { metricsPort: 0 } });
    const { sim, bot } = fixture;
    const url = bot.metricsUrl as string;
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/metrics$/);

    const alice = sim.users.create({ firstName: "Alice" });
    const chat = sim.chats.createPrivate(alice);
    // One 429 (chat scope) on the first reply, which the outbox sits out and then delivers.
    sim.faults.failNext("sendMessage", 1, { code: 429, retryAfter: 1 / TIME_SCALE });
    const hello = sim.sendText(alice, chat, "hello");
    await replyTo(sim, chat, hello, () => true);
    const document = sim.sendDocument(alice, chat, {
      bytes: randomBytes(300_000),
      fileName: "a.bin",
    });
    await replyTo(sim, chat, document, (m) => "text" in m && m.text.includes("SHA-256"));
    // A job whose progress edits wait, and coalesce, behind the chat's pacing.
    const work = sim.sendCommand(alice, chat, "work", "2");
    await replyTo(sim, chat, work, (m) => cancelData(m) !== undefined);

    const text = await scrapeSettled(url);
    expectNoToken(text, sim.token);
    const scope = { telepace_rate_limit_scope: "chat", telepace_chat_kind: "private" };
    expect(sample(text, "telepace_outbox_rate_limited_total", scope)).toBe(1);
    expect(
      sample(text, "telepace_outbox_retry_after_count", { telepace_rate_limit_scope: "chat" }),
    ).toBe(1);
    for (const kind of ["private", "group", "supergroup", "none"]) {
      expect(
        sample(text, "telepace_outbox_queue_depth", { telepace_chat_kind: kind }),
      ).toBeGreaterThanOrEqual(0);
      expect(
        sample(text, "telepace_outbox_in_flight", { telepace_chat_kind: kind }),
      ).toBeGreaterThanOrEqual(0);
      expect(
        sample(text, "telepace_outbox_frozen_chats", { telepace_chat_kind: kind }),
      ).toBeGreaterThanOrEqual(0);
    }
    // Three replies at least (the echo, the digest, the progress message) waited in line.
    expect(
      sample(text, "telepace_outbox_queue_wait_count", { telepace_chat_kind: "private" }),
    ).toBeGreaterThanOrEqual(3);
    expect(sample(text, "telepace_outbox_ops_enqueued_total")).toBeGreaterThanOrEqual(3);
    // Every update was fetched, stored, confirmed and finished: the confirmed offset is not ahead
    // of any unfinished update.
    expect(sample(text, "telepace_intake_updates_fetched_total")).toBeGreaterThanOrEqual(3);
    expect(sample(text, "telepace_intake_offset_lag")).toBe(0);
    expect(
      sample(text, "telepace_dispatch_updates_total", { telepace_outcome: "succeeded" }),
    ).toBeGreaterThanOrEqual(2);
    // The document's 300 000 bytes were granted to its download.
    expect(
      sample(text, "telepace_media_bytes_granted_total", { telepace_media_direction: "download" }),
    ).toBeGreaterThanOrEqual(300_000);

    // Only /metrics is served; another path is a 404 that says where to look.
    const other = await fetch(url.replace("/metrics", "/"));
    expect(other.status).toBe(404);
    expect(await other.text()).toBe("Scrape /metrics\n");

    // Stopping the bot closes the endpoint.
    await bot.stop();
    await expect(fetch(url)).rejects.toThrow();
  });

  it("refuses to start on a port that is taken, in one line", async () => {
    const taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, "127.0.0.1", resolve));
    const port = (taken.address() as { port: number }).port;
    try {
      const failure = await launchFixture({ bot: { metricsPort: port } }).then(
        async (fixture) => {
          await fixture[Symbol.asyncDispose]();
          throw new Error("expected the launch to fail");
        },
        (error: unknown) => error,
      );
      expect(failure).toBeInstanceOf(StartupError);
      expect((failure as Error).message).toBe(
        `Cannot serve metrics on 127.0.0.1:${port} (EADDRINUSE)`,
      );
    } finally {
      await new Promise((resolve) => taken.close(resolve));
    }
  });

  it("is served by `--metrics-port` from the command line, which prints where", async () => {
    const sim = await start();
    const dataDir = await mkdtemp(join(tmpdir(), "telepace-metrics-"));
    let bot: BotChild | undefined;
    try {
      bot = spawnBot(sim, ["--data-dir", dataDir, "--metrics-port", "0"]);
      const url = (await bot.line(METRICS_LINE))[1] as string;
      const alice = sim.users.create({ firstName: "Alice" });
      const chat = sim.chats.createPrivate(alice);
      const hello = sim.sendText(alice, chat, "hello");
      await replyTo(sim, chat, hello, () => true);

      const text = await scrapeSettled(url);
      expectNoToken(text, sim.token);
      expect(sample(text, "telepace_intake_updates_fetched_total")).toBe(1);
      expect(sample(text, "telepace_intake_offset_lag")).toBe(0);
      expect(
        sample(text, "telepace_outbox_ops_settled_total", { telepace_outcome: "delivered" }),
      ).toBe(1);
      expect(text).toContain('otel_scope_name="@telepace/reference-bot"');

      bot.child.kill("SIGTERM");
      expect(await bot.exited).toBe(0);
    } finally {
      if (bot?.child.exitCode === null) bot.child.kill("SIGKILL");
      await sim.close();
      await rm(dataDir, { recursive: true, force: true });
    }
  });
});
