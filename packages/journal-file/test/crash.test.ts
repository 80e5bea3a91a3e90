// Real crashes: a child process appends, finishes and stores state in a loop and is killed with
// SIGKILL at a random point, mostly inside a write or a sync. Reopening must show every
// acknowledged batch, each batch whole or not at all, every acknowledged finish, and go on.

import { spawn } from "node:child_process";
import { once } from "node:events";
import { appendFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { FileUpdateJournal } from "../src/index.js";
import { encodeRecord } from "../src/record-codec.js";
import { crashUpdate } from "./fixtures/crash-update.js";
import { roundIds } from "./fixtures/restart-rounds.js";
import { logPath, temporaryDirectory } from "./helpers.js";

const APPEND_CHILD = fileURLToPath(new URL("./fixtures/append-child.ts", import.meta.url));
const RESTART_CHILD = fileURLToPath(new URL("./fixtures/restart-child.ts", import.meta.url));
const PACKAGE = fileURLToPath(new URL("..", import.meta.url));

interface ChildRun {
  /** Every line the child printed, by kind. */
  readonly lines: { readonly kind: string; readonly ids: number[] }[];
  readonly stderr: string;
}

/** When to kill: `delayMs` after the `count`-th line of this kind. */
interface KillPlan {
  readonly kind: string;
  readonly count: number;
  readonly delayMs: number;
}

/** Starts a fixture with `args` and kills it with SIGKILL as `plan` says. */
async function runAndKill(script: string, args: string[], plan: KillPlan): Promise<ChildRun> {
  const child = spawn(
    process.execPath,
    ["--conditions=@telepace/source", "--import", "tsx", script, ...args],
    { cwd: PACKAGE, stdio: ["ignore", "pipe", "pipe"] },
  );
  const lines: { kind: string; ids: number[] }[] = [];
  let stderr = "";
  let buffered = "";
  let seen = 0;
  let isKilledOnPlan = false;
  child.stderr.on("data", (chunk) => {
    stderr += chunk;
  });
  child.stdout.on("data", (chunk) => {
    buffered += chunk;
    const complete = buffered.split("\n");
    buffered = complete.pop() ?? "";
    for (const line of complete) {
      const [kind = "", ids = ""] = line.split(" ");
      lines.push({ kind, ids: ids.split(",").map(Number) });
      if (kind === plan.kind && ++seen === plan.count) {
        isKilledOnPlan = true;
        setTimeout(() => child.kill("SIGKILL"), plan.delayMs);
      }
    }
  });
  // Whatever happens, the child does not outlive the test (it would append forever).
  const backstop = setTimeout(() => child.kill("SIGKILL"), 20_000);
  const [code, signal] = (await once(child, "exit")) as [number | null, string | null];
  clearTimeout(backstop);
  expect({ code, signal, stderr, isKilledOnPlan }).toMatchObject({
    code: null,
    signal: "SIGKILL",
    isKilledOnPlan: true,
  });
  return { lines, stderr };
}

describe("a process killed with SIGKILL", () => {
  it("loses no acknowledged batch or finish, never shows part of a batch, and goes on", async () => {
    const directory = await temporaryDirectory();
    const acknowledged = new Set<number>();
    const finishing = new Set<number>();
    const finished = new Set<number>();
    let lastState = 0;
    const repeatOf = new Map<number, number>();
    for (let run = 0; run < 6; run++) {
      // Small updates, then large ones (batches of up to 640 KB, many pages per write).
      const plan = {
        batchSize: 1 + Math.floor(Math.random() * 40),
        textRepeat: run % 2 === 0 ? 200 : 1000,
        acks: 1 + Math.floor(Math.random() * 20),
        delayMs: Math.random() * 3,
      };
      const { lines } = await runAndKill(
        APPEND_CHILD,
        [
          directory,
          String(plan.batchSize),
          String(plan.textRepeat),
          // Small enough that the child compacts every few batches, so kills land in compactions too.
          String(512 * 1024),
        ],
        { kind: "acked", count: plan.acks, delayMs: plan.delayMs },
      );
      const context = JSON.stringify({ run, plan });
      const begun: number[][] = [];
      for (const { kind, ids } of lines) {
        if (kind === "begin") {
          begun.push(ids);
          for (const id of ids) repeatOf.set(id, plan.textRepeat);
        }
        if (kind === "acked") for (const id of ids) acknowledged.add(id);
        if (kind === "finishing") for (const id of ids) finishing.add(id);
        if (kind === "finished") for (const id of ids) finished.add(id);
        if (kind === "state") lastState = ids[0] as number;
      }

      // A kill seldom lands inside the write system call itself (Linux would stop it between two
      // pages), so every other run also adds what such a kill leaves: a prefix of the next record.
      let torn = 0;
      if (run % 2 === 1) {
        const frame = encodeRecord({
          type: "append",
          updates: [crashUpdate(1e9, plan.textRepeat)],
        });
        torn = 1 + Math.floor(Math.random() * (frame.length - 1));
        await appendFile(logPath(directory), frame.subarray(0, torn));
      }
      const journal = await FileUpdateJournal.open(directory);
      // At least the added prefix is cut (more when the kill itself tore the last write).
      expect(journal.snapshot().recoveredTailBytes, context).toBeGreaterThanOrEqual(torn);
      const unfinished = await journal.unfinished();
      const stored = new Set(unfinished.map((update) => update.update_id));
      // No partial or mixed-up record: what comes back is exactly what was appended.
      for (const update of unfinished) {
        const id = update.update_id;
        expect(update, context).toEqual(crashUpdate(id, repeatOf.get(id) ?? 0));
      }
      for (const id of acknowledged) {
        // A finish the kill interrupted may or may not have been written.
        if (finishing.has(id) && !finished.has(id)) continue;
        expect(stored.has(id), `${context} acked ${id}`).toBe(!finished.has(id));
      }
      // The batch in flight at the kill is there whole or not at all.
      for (const batch of begun) {
        const present = batch.filter((id) => stored.has(id) || finished.has(id)).length;
        expect([0, batch.length], `${context} batch ${batch[0]}`).toContain(present);
      }
      const progress = (await journal.state()).get("progress") as { batch: number } | undefined;
      expect(progress?.batch ?? 0, context).toBeGreaterThanOrEqual(lastState);
      expect(await journal.highestUpdateId(), context).toBeGreaterThanOrEqual(
        Math.max(...acknowledged),
      );
      // Every acknowledged id is a duplicate now, finished or not.
      const again = await journal.append([...acknowledged].map((id) => crashUpdate(id, 1)));
      expect(again.appended, context).toEqual([]);
      await journal.close();
    }
  }, 60_000);
});

describe("a process killed with SIGKILL while it restarts the ids", () => {
  it("leaves the old numbering or the new one, never a mix", async () => {
    const outcomes = new Set<string>();
    // Soon after a restart began (inside its compaction of a 2 MB state record), and after one
    // ended (before the next numbering's first update).
    const plans = [
      ...[0, 1, 2, 4, 6, 8, 12, 20].map((delayMs) => ({ kind: "restarting", delayMs })),
      ...[0, 5, 10].map((delayMs) => ({ kind: "restarted", delayMs })),
    ];
    for (const [run, { kind, delayMs }] of plans.entries()) {
      const directory = await temporaryDirectory();
      const plan = { kind, count: 1 + (run % 3), delayMs };
      const { lines } = await runAndKill(RESTART_CHILD, [directory, String(2_000_000)], plan);
      const journal = await FileUpdateJournal.open(directory);
      // The last round whose state record was synced; its restart may or may not have happened.
      const round = (await journal.state()).get("round") as number;
      const context = JSON.stringify({ run, plan, round });
      const restarted = lines.some(({ kind, ids }) => kind === "restarted" && ids[0] === round);
      const highest = await journal.highestUpdateId();
      const old = roundIds(round);
      const next = roundIds(round + 1);
      expect(((await journal.state()).get("ballast") as string).length, context).toBe(2_000_000);
      const unfinished = (await journal.unfinished()).map((update) => update.update_id);
      const again = await journal.append(old.map((id) => crashUpdate(id, 1)));
      if (highest === old.at(-1)) {
        // The old numbering, whole: every id of the round is still a duplicate.
        expect(restarted, context).toBe(false);
        expect(unfinished, context).toEqual([]);
        expect(again.duplicates, context).toBe(5);
        outcomes.add("old");
      } else {
        // The new numbering: nothing of the old one remembered; maybe some of the next round.
        expect(highest === undefined || next.includes(highest), `${context} ${highest}`).toBe(true);
        expect(
          unfinished.every((id) => next.includes(id)),
          context,
        ).toBe(true);
        expect(again.duplicates, context).toBe(0);
        outcomes.add("new");
      }
      await journal.close();
    }
    // Both happen over the runs: the kills did land on either side of the rename.
    expect([...outcomes].sort()).toEqual(["new", "old"]);
  }, 120_000);
});
