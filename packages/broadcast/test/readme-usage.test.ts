// The README's Usage is a complete program: a broadcast over a file journal against a sim of its
// own. It runs as a user would run it; run again on the same journal, it sends nothing twice.

import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { start } from "@telepace/bot-api-sim";
import { runUsageExample } from "@telepace/testing";
import { expect, it } from "vitest";

it("the README's Usage reaches everyone once, and a second run sends nothing", async () => {
  await using sim = await start();
  const ids = Array.from({ length: 12 }, () => {
    const user = sim.users.create();
    sim.chats.createPrivate(user);
    return user.id;
  });
  const dataDir = await mkdtemp(join(tmpdir(), "telepace-broadcast-readme-"));
  try {
    Object.assign(process.env, {
      TELEGRAM_BOT_TOKEN: sim.token,
      TELEGRAM_API_ROOT: sim.apiRoot,
      TELEGRAM_CHAT_ID: ids.join(","),
      JOURNAL_DIR: dataDir,
    });
    const packageDir = join(dirname(fileURLToPath(import.meta.url)), "..");
    const first = await runUsageExample(packageDir, { timeoutMs: 60_000 });
    expect(first).toMatchObject({ exitCode: 0, stderr: "" });
    expect(first.stdout).toMatch(/^completed \{"sent":12,/);
    expect(ids.map((id) => sim.transcript(id).messages.length)).toEqual(ids.map(() => 1));
    const again = await runUsageExample(packageDir, { timeoutMs: 60_000 });
    expect(again.stdout).toMatch(/^completed \{"sent":12,/);
    expect(sim.counters().messagesSent).toBe(12);
  } finally {
    for (const name of [
      "TELEGRAM_BOT_TOKEN",
      "TELEGRAM_API_ROOT",
      "TELEGRAM_CHAT_ID",
      "JOURNAL_DIR",
    ]) {
      delete process.env[name];
    }
    await rm(dataDir, { recursive: true, force: true });
  }
}, 120_000);
