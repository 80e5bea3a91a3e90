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
import { logPath, temporaryDirectory } from "./helpers.js";

const CHILD = fileURLToPath(new URL("./fixtures/append-child.ts", import.meta.url));
const PACKAGE = fileURLToPath(new URL("..", import.meta.url));

interface ChildRun {
  /** Every line the child printed, by kind. */
  readonly lines: { readonly kind: string; readonly ids: number[] }[];
  readonly stderr: string;
}

/** Starts the child and kills it with SIGKILL `delayMs` after its `acks`-th acknowledged batch. */
async function runAndKill(
  directory: string,
  options: { batchSize: number; textRepeat: number; acks: number; delayMs: number },
): Promise<ChildRun> {
  const child = spawn(
    process.execPath,
    [
      "--conditions=@telepace/source",
      "--import",
      "tsx",
      CHILD,
      directory,
      String(options.batchSize),
      String(options.textRepeat),
      // Small enough that the child compacts every few batches, so kills land in compactions too.
      String(512 * 1024),
    ],
    { cwd: PACKAGE, stdio: ["ignore", "pipe", "pipe"] },
  );
  const lines: { kind: string; ids: number[] }[] = [];
  let stderr = "";
  let buffered = "";
  let acks = 0;
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
      if (kind === "acked" && ++acks === options.acks) {
        isKilledOnPlan = true;
        setTimeout(() => child.kill("SIGKILL"), options.delayMs);
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
      const { lines } = await runAndKill(directory, plan);
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
