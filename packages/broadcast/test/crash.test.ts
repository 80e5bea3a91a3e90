// kill -9 mid-broadcast: a child process runs a paid broadcast over a FileUpdateJournal against
// the sim and is SIGKILLed after a third of the recipients; a second process resumes from the
// journal. Nobody is missed; nobody gets it twice except the sends in flight at the kill, which
// the journal shows as started and the report counts as resent.

import { type ChildProcess, fork } from "node:child_process";
import { once } from "node:events";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { type BotApiSim, start } from "@telepace/bot-api-sim";
import { FileUpdateJournal } from "@telepace/journal-file";
import { childProcesses } from "@telepace/testing";
import { afterEach, describe, expect, it } from "vitest";
import type { BroadcastReport } from "../src/index.js";

const CHILD = fileURLToPath(new URL("./fixtures/broadcast-child.ts", import.meta.url));
const PACKAGE = fileURLToPath(new URL("..", import.meta.url));

const children = childProcesses();
const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  await children.killAll();
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

function startChild(args: readonly string[]): ChildProcess {
  return children.track(
    fork(CHILD, [...args], {
      cwd: PACKAGE,
      execArgv: ["--conditions=@telepace/source", "--import", "tsx"],
      stdio: ["ignore", "inherit", "inherit", "ipc"],
    }),
  );
}

/** Resolves with the first IPC message the predicate accepts. */
function message<T>(child: ChildProcess, accept: (m: { type: string } & T) => boolean) {
  return new Promise<{ type: string } & T>((resolve, reject) => {
    const onExit = (code: number | null) => reject(new Error(`child exited (${code}) first`));
    child.once("exit", onExit);
    child.on("message", function listener(m: { type: string } & T) {
      if (!accept(m)) return;
      child.off("message", listener);
      child.off("exit", onExit);
      resolve(m);
    });
  });
}

describe("a broadcast across kill -9", () => {
  it("resumes from the file journal: no one missed, repeats only among the sends in flight", async () => {
    const sim: BotApiSim = await start({ paidBroadcasts: true });
    cleanups.push(() => sim.close());
    const recipients = Array.from({ length: 900 }, () => {
      const user = sim.users.create();
      sim.chats.createPrivate(user);
      return user.id;
    });
    const dir = await mkdtemp(path.join(tmpdir(), "telepace-broadcast-crash-"));
    cleanups.push(() => rm(dir, { recursive: true, force: true }));
    const recipientsFile = path.join(dir, "recipients.json");
    await writeFile(recipientsFile, JSON.stringify(recipients));
    const dataDir = path.join(dir, "data");
    const args = [dataDir, sim.apiRoot, sim.token, recipientsFile];

    const first = startChild(args);
    await message<{ settled: number }>(first, (m) => m.type === "settled" && m.settled >= 300);
    const exited = once(first, "exit");
    first.kill("SIGKILL");
    await exited;
    const sentAtKill = sim.counters().messagesSent;

    // What the journal says was in flight: started, no outcome.
    const journal = await FileUpdateJournal.open(dataDir);
    const inFlight = [...(await journal.state())]
      .filter(([key, value]) => /^broadcast:crash:\d+$/.test(key) && value === "s")
      .map(([key]) => recipients[Number(key.slice("broadcast:crash:".length))] as number);
    await journal.close();
    // At most the outbox's requests in flight (maxInFlight 64 in the child) can be cut off.
    expect(inFlight.length).toBeLessThanOrEqual(64);
    expect(sentAtKill).toBeGreaterThanOrEqual(300);
    expect(sentAtKill).toBeLessThan(900);

    const second = startChild(args);
    const { report } = await message<{ report: BroadcastReport }>(
      second,
      (m) => m.type === "report",
    );
    await once(second, "exit");

    const counts = recipients.map((id) => sim.transcript(id).messages.length);
    const missed = recipients.filter((_, index) => counts[index] === 0);
    const twice = recipients.filter((_, index) => (counts[index] as number) > 1);
    expect(missed).toEqual([]);
    expect(twice.filter((id) => !inFlight.includes(id))).toEqual([]);
    expect(report).toMatchObject({ status: "completed", counts: { sent: 900 } });
    expect(report.counts.resentAfterCrash).toBe(inFlight.length);
    expect(sim.counters().tooManyRequests).toBe(0);
  }, 120_000);
});
