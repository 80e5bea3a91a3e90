// kill -9 and a restart, with the bot in a real child process on a FileUpdateJournal: a job that
// was running ends with a message to its user, no update is lost (every update the sim queued was
// handled by one of the two processes), and what was unfinished replays in per-person order.

import { randomBytes } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type BotApiSim, start } from "@telepace/bot-api-sim";
import { FileUpdateJournal } from "@telepace/journal-file";
import { describe, expect, it } from "vitest";
import { BotLedger } from "../src/demo/bot-ledger.js";
import { BotProcess } from "../src/demo/bot-process.js";
import {
  BOT_COMMAND,
  cancelData,
  eventually,
  REPLY_TIMEOUT_MS,
  replyTo,
  sha256,
  textOf,
} from "./harness.js";

const CRASH_TIMEOUT_MS = 45_000;

interface CrashFixture extends AsyncDisposable {
  readonly sim: BotApiSim;
  readonly ledger: BotLedger;
  readonly dataDir: string;
  /** Starts a bot process on the fixture's journal. */
  launch(): Promise<BotProcess>;
}

async function crashFixture(): Promise<CrashFixture> {
  const sim = await start();
  const dataDir = await mkdtemp(join(tmpdir(), "telepace-crash-"));
  const ledger = new BotLedger();
  const processes: BotProcess[] = [];
  return {
    sim,
    ledger,
    dataDir,
    async launch() {
      const bot = await BotProcess.start({
        apiRoot: sim.apiRoot,
        token: sim.token,
        dataDir,
        logLevel: "error",
        command: BOT_COMMAND,
        onMessage: (message) => ledger.record(message),
      });
      processes.push(bot);
      return bot;
    },
    async [Symbol.asyncDispose]() {
      await Promise.all(processes.map((bot) => bot.kill()));
      await sim.close({ timeoutMs: 1_000 });
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}

/** The journal left in `dataDir`, read after every bot process has exited. */
async function journalLeft(dataDir: string) {
  await using journal = await FileUpdateJournal.open(dataDir);
  return { state: [...(await journal.state()).keys()], unfinished: await journal.unfinished() };
}

describe("kill -9 and restart", { timeout: CRASH_TIMEOUT_MS, concurrent: true }, () => {
  it("ends a running job with a message to its user and loses no update", async () => {
    await using fixture = await crashFixture();
    const { sim, ledger } = fixture;
    const alice = sim.users.create({ firstName: "Alice" });
    const bob = sim.users.create({ firstName: "Bob" });
    const aliceChat = sim.chats.createPrivate(alice);
    const bobChat = sim.chats.createPrivate(bob);

    const first = await fixture.launch();
    expect(first.ready.journal).toMatch(/^file journal in .* \(durable\)$/);
    const work = sim.sendCommand(alice, aliceChat, "work", "30");
    const progress = await replyTo(sim, aliceChat, work, (m) => cancelData(m) !== undefined);
    // Once the job shows progress, the /work update has long been finished in the journal (else
    // it would replay and start the job again, which is allowed but not this test's case).
    await sim.waitForEvent(aliceChat, (event) => event.kind === "edit", {
      timeoutMs: REPLY_TIMEOUT_MS,
    });
    expect(ledger.jobs().started).toBe(1);
    const exit = await first.kill();
    expect(exit.signal).toBe("SIGKILL");

    // While no bot runs: Bob writes, Alice presses Cancel on the orphaned progress message.
    const whileDown = sim.sendText(bob, bobChat, "are you there?");
    const press = sim.pressButton(
      alice,
      aliceChat,
      progress.message_id,
      cancelData(progress) ?? "",
    );

    const second = await fixture.launch();
    expect(second.ready.leftoverJobs).toBe(1);
    const ending = await replyTo(sim, aliceChat, progress, (m) => textOf(m).startsWith("Inter"));
    expect(textOf(ending)).toBe(
      "Interrupted, Alice: the bot restarted before your 30 s job finished. Send /work 30 to run it again.",
    );
    // It replaced the progress message, so no stale Cancel button is left.
    await eventually("the progress message is gone", () =>
      sim.transcript(aliceChat).messages.every((m) => m.message_id !== progress.message_id),
    );
    const answer = await sim.waitForCallbackAnswer(press.id, { timeoutMs: REPLY_TIMEOUT_MS });
    expect(answer.text).toBe("That job has already finished.");
    expect(textOf(await replyTo(sim, bobChat, whileDown, () => true))).toBe(
      "You said: are you there?",
    );

    expect((await second.stop()).code).toBe(0);
    // Every update the sim queued was handled by one process or the other.
    expect(ledger.updatesHandled).toBe(sim.counters().updatesQueued);
    expect(ledger.jobs()).toMatchObject({
      started: 1,
      recovered: 1,
      recoveredDelivered: 1,
      unaccounted: 0,
    });
    expect(await journalLeft(fixture.dataDir)).toEqual({ state: [], unfinished: [] });
  });

  it("replays what was unfinished at the kill in per-person order", async () => {
    await using fixture = await crashFixture();
    const { sim, ledger } = fixture;
    const carol = sim.users.create({ firstName: "Carol" });
    const chat = sim.chats.createPrivate(carol);
    // A slow download holds Carol's key; her next messages queue behind it.
    sim.faults.setLatency(300, { methods: ["download"] });
    const bytes = randomBytes(1024 * 1024);

    const first = await fixture.launch();
    const document = sim.sendDocument(carol, chat, { bytes, fileName: "big.bin" });
    for (const text of ["one", "two", "three"]) sim.sendText(carol, chat, text);
    await eventually("the download has begun", () => sim.counters().bytesServed > 0);
    await eventually("all four are stored", () => sim.pendingUpdates() === 0);
    await first.kill();
    expect(ledger.updatesHandled).toBe(0);

    sim.faults.setLatency(0, { methods: ["download"] });
    const second = await fixture.launch();
    expect(second.ready.unfinishedUpdates).toBe(4);
    await replyTo(sim, chat, document, (m) => textOf(m) === "You said: three");
    const replies = sim
      .transcript(chat)
      .messages.filter((m) => m.from?.is_bot === true)
      .map(textOf);
    expect(replies).toEqual([
      `big.bin: ${bytes.length} bytes, SHA-256 ${sha256(bytes)}`,
      "You said: one",
      "You said: two",
      "You said: three",
    ]);
    await second.stop();
    expect(ledger.updatesHandled).toBe(sim.counters().updatesQueued);
    expect(ledger.updatesRepeated).toBe(0);
    expect(await journalLeft(fixture.dataDir)).toEqual({ state: [], unfinished: [] });
  });
});
