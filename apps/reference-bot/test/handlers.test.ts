// Each handler end to end, over real HTTP against the sim: /start and /help, echo (private, and in
// groups only when addressed), /work with coalesced progress and a replace-progress ending, the
// Cancel button (the owner's press and someone else's), documents (with and without Range) and
// /file, and the usage texts for bad arguments.

import { randomBytes } from "node:crypto";
import type { Message } from "@grammyjs/types";
import { describe, expect, it } from "vitest";
import { HELP_TEXT } from "../src/commands.js";
import { MAX_FILE_KIB, MAX_WORK_SECONDS } from "../src/update-router.js";
import {
  botSendsMatching,
  cancelData,
  downloadFromSim,
  E2E_TIMEOUT_MS,
  eventually,
  launchFixture,
  REPLY_TIMEOUT_MS,
  replyTo,
  sha256,
  textOf,
} from "./harness.js";

const replyId = (message: Message) =>
  (message as { reply_to_message?: { message_id: number } }).reply_to_message?.message_id;

describe("/start and /help", { timeout: E2E_TIMEOUT_MS, concurrent: true }, () => {
  it("answer the command with the help text, as a reply to it", async () => {
    await using fixture = await launchFixture();
    const { sim } = fixture;
    const alice = sim.users.create({ firstName: "Alice" });
    const chat = sim.chats.createPrivate(alice);
    for (const command of ["start", "help"]) {
      const sent = sim.sendCommand(alice, chat, command);
      const reply = await replyTo(sim, chat, sent, () => true);
      expect(textOf(reply)).toBe(HELP_TEXT);
      expect(replyId(reply)).toBe(sent.message_id);
    }
  });

  it("answers an unknown command with a pointer to /help", async () => {
    await using fixture = await launchFixture();
    const { sim } = fixture;
    const alice = sim.users.create({ firstName: "Alice" });
    const chat = sim.chats.createPrivate(alice);
    const sent = sim.sendCommand(alice, chat, "frobnicate");
    const reply = await replyTo(sim, chat, sent, () => true);
    expect(textOf(reply)).toBe("Unknown command /frobnicate. Send /help for the list.");
  });
});

describe("echo", { timeout: E2E_TIMEOUT_MS, concurrent: true }, () => {
  it("echoes any text in a private chat, as a reply", async () => {
    await using fixture = await launchFixture();
    const { sim, bot } = fixture;
    const alice = sim.users.create({ firstName: "Alice" });
    const chat = sim.chats.createPrivate(alice);
    const sent = sim.sendText(alice, chat, "hello there");
    const reply = await replyTo(sim, chat, sent, () => true);
    expect(textOf(reply)).toBe("You said: hello there");
    expect(replyId(reply)).toBe(sent.message_id);
    expect(bot.stats().router.echoes).toBe(1);
  });

  it("in a group echoes only text that mentions the bot or replies to it", async () => {
    // Privacy mode off, so the sim delivers every group message and the bot itself must decide.
    await using fixture = await launchFixture({
      sim: { bots: [{ canReadAllGroupMessages: true }] },
    });
    const { sim, bot } = fixture;
    const alice = sim.users.create({ firstName: "Alice" });
    const bob = sim.users.create({ firstName: "Bob" });
    const group = sim.chats.createGroup({ title: "Team", members: [alice, bob] });
    const username = bot.me.username;

    sim.sendText(alice, group, "lunch at noon?");
    const mention = sim.sendText(alice, group, `@${username} ping`);
    const echo = await replyTo(sim, group, mention, () => true);
    expect(textOf(echo)).toBe(`You said: @${username} ping`);

    const reply = sim.sendText(bob, group, "and again", { replyTo: echo.message_id });
    const echoOfReply = await replyTo(sim, group, reply, (m) => textOf(m).includes("again"));
    expect(textOf(echoOfReply)).toBe("You said: and again");

    // Alice's chatter was handled before her mention (one person's updates run in order), and
    // got no echo.
    expect(botSendsMatching(sim, group, /^You said/)).toEqual([
      `You said: @${username} ping`,
      "You said: and again",
    ]);
    expect(bot.stats().router.echoes).toBe(2);
  });

  it("in a group in privacy mode answers a mention and a command", async () => {
    await using fixture = await launchFixture();
    const { sim, bot } = fixture;
    const alice = sim.users.create({ firstName: "Alice" });
    const group = sim.chats.createGroup({ title: "Team", members: [alice] });
    const mention = sim.sendText(alice, group, `hey @${bot.me.username}`);
    expect(textOf(await replyTo(sim, group, mention, () => true))).toBe(
      `You said: hey @${bot.me.username}`,
    );
    const help = sim.sendCommand(alice, group, `help@${bot.me.username}`);
    expect(textOf(await replyTo(sim, group, help, () => true))).toBe(HELP_TEXT);
  });
});

describe("/work", { timeout: E2E_TIMEOUT_MS, concurrent: true }, () => {
  it("streams coalesced progress edits and ends with a replace-progress final message", async () => {
    // 50 progress updates a second against an outbox that edits a private chat 20 times a second.
    await using fixture = await launchFixture({ bot: { progressHz: 50 } });
    const { sim, bot } = fixture;
    const alice = sim.users.create({ firstName: "Alice" });
    const chat = sim.chats.createPrivate(alice);
    const sent = sim.sendCommand(alice, chat, "work", "1");
    const progress = await replyTo(sim, chat, sent, (m) => cancelData(m) !== undefined);
    expect(textOf(progress)).toBe("Working… 0% ░░░░░░░░░░");
    expect(replyId(progress)).toBe(sent.message_id);

    const final = await replyTo(sim, chat, progress, (m) => textOf(m).startsWith("Done"));
    expect(textOf(final)).toBe("Done, Alice: 1 s of work finished.");
    await sim.waitForEvent(
      chat,
      (event) => event.kind === "delete" && event.messageId === progress.message_id,
      { timeoutMs: REPLY_TIMEOUT_MS },
    );

    const events = sim.transcript(chat).events.filter((event) => event.actor === "bot");
    const edits = events.filter((event) => event.kind === "edit");
    expect(edits.length).toBeGreaterThanOrEqual(3);
    expect(edits.every((event) => event.messageId === progress.message_id)).toBe(true);
    const percents = edits.map((event) => Number(/(\d+)%/.exec(event.text ?? "")?.[1]));
    expect(percents).toEqual([...percents].sort((a, b) => a - b));
    expect(percents.every((percent) => percent > 0 && percent < 100)).toBe(true);

    const stats = bot.stats();
    const editCalls = sim.counters().calls.editMessageText ?? 0;
    expect(editCalls).toBe(edits.length);
    expect(stats.jobs.progressRequested).toBeGreaterThan(editCalls);
    expect(stats.outbox.coalesced).toBeGreaterThan(0);
    expect(stats.jobs.ended.done).toBe(1);

    // The final message went out before the progress message was deleted, and only it remains.
    const finalSend = events.findIndex(
      (e) => e.kind === "send" && e.messageId === final.message_id,
    );
    const deletion = events.findIndex((e) => e.kind === "delete");
    expect(finalSend).toBeGreaterThan(-1);
    expect(deletion).toBeGreaterThan(finalSend);
    const remaining = sim.transcript(chat).messages.filter((m) => m.from?.is_bot === true);
    expect(remaining.map(textOf)).toEqual(["Done, Alice: 1 s of work finished."]);
  });

  it("refuses a job beyond maxJobs with a message, and runs the next one once a slot is free", async () => {
    await using fixture = await launchFixture({ bot: { maxJobs: 1 } });
    const { sim, bot } = fixture;
    const alice = sim.users.create({ firstName: "Alice" });
    const bob = sim.users.create({ firstName: "Bob" });
    const aliceChat = sim.chats.createPrivate(alice);
    const bobChat = sim.chats.createPrivate(bob);
    const first = sim.sendCommand(alice, aliceChat, "work", "1");
    const progress = await replyTo(sim, aliceChat, first, (m) => cancelData(m) !== undefined);
    const second = sim.sendCommand(bob, bobChat, "work", "1");
    expect(textOf(await replyTo(sim, bobChat, second, () => true))).toBe(
      "Too many jobs are running right now; try again in a moment.",
    );
    await replyTo(sim, aliceChat, progress, (m) => textOf(m).startsWith("Done"));
    await eventually("the first job has ended", () => bot.stats().jobs.running === 0);
    const retry = sim.sendCommand(bob, bobChat, "work", "1");
    const done = await replyTo(sim, bobChat, retry, (m) => textOf(m).startsWith("Done"));
    expect(textOf(done)).toBe("Done, Bob: 1 s of work finished.");
    expect(bot.stats().jobs).toMatchObject({ started: 2, refused: 1 });
  });

  it("answers bad durations with the usage text", async () => {
    await using fixture = await launchFixture();
    const { sim, bot } = fixture;
    const alice = sim.users.create({ firstName: "Alice" });
    const chat = sim.chats.createPrivate(alice);
    const usage = `Usage: /work [seconds], with 1 to ${MAX_WORK_SECONDS} seconds.`;
    for (const args of ["0", String(MAX_WORK_SECONDS + 1), "soon", "1.5", "-3"]) {
      const sent = sim.sendCommand(alice, chat, "work", args);
      expect(textOf(await replyTo(sim, chat, sent, () => true))).toBe(usage);
    }
    expect(bot.stats().jobs.started).toBe(0);
  });
});

describe("the Cancel button", { timeout: E2E_TIMEOUT_MS, concurrent: true }, () => {
  it("cancels the owner's running job and refuses anyone else's press", async () => {
    await using fixture = await launchFixture();
    const { sim, bot } = fixture;
    const alice = sim.users.create({ firstName: "Alice" });
    const bob = sim.users.create({ firstName: "Bob" });
    const group = sim.chats.createGroup({ title: "Team", members: [alice, bob] });
    const sent = sim.sendCommand(alice, group, "work", "60");
    const progress = await replyTo(sim, group, sent, (m) => cancelData(m) !== undefined);
    const data = cancelData(progress) as string;
    expect(data).toMatch(/^cancel:[A-Za-z0-9_-]{8}$/);
    // Let some progress show, so the cancel happens mid-job.
    await sim.waitForEvent(group, (event) => event.kind === "edit", {
      timeoutMs: REPLY_TIMEOUT_MS,
    });

    const bobsPress = sim.pressButton(bob, group, progress.message_id, data);
    const refusal = await sim.waitForCallbackAnswer(bobsPress.id, { timeoutMs: REPLY_TIMEOUT_MS });
    expect(refusal.text).toBe("Only the person who started this job can cancel it.");
    expect(bot.stats().jobs.running).toBe(1);

    const alicesPress = sim.pressButton(alice, group, progress.message_id, data);
    const answer = await sim.waitForCallbackAnswer(alicesPress.id, {
      timeoutMs: REPLY_TIMEOUT_MS,
    });
    expect(answer.text).toBe("Cancelling…");
    const final = await replyTo(sim, group, progress, (m) => /^(Cancelled|Done)/.test(textOf(m)));
    const percent = Number(/^Cancelled, Alice, at (\d+)%\.$/.exec(textOf(final))?.[1]);
    expect(percent).toBeGreaterThanOrEqual(0);
    expect(percent).toBeLessThan(100);
    await sim.waitForEvent(
      group,
      (event) => event.kind === "delete" && event.messageId === progress.message_id,
      { timeoutMs: REPLY_TIMEOUT_MS },
    );
    await eventually("the job has ended", () => bot.stats().jobs.running === 0);
    expect(bot.stats().jobs.ended).toMatchObject({ cancelled: 1, done: 0 });
  });

  it("tells whoever presses the button of a finished job that it is over", async () => {
    await using fixture = await launchFixture();
    const { sim } = fixture;
    const alice = sim.users.create({ firstName: "Alice" });
    const chat = sim.chats.createPrivate(alice);
    const sent = sim.sendCommand(alice, chat, "work", "1");
    const progress = await replyTo(sim, chat, sent, (m) => cancelData(m) !== undefined);
    const data = cancelData(progress) as string;
    // The press arrives after the job finished but before its progress message was deleted.
    const pressed = await new Promise<string>((resolve, reject) => {
      sim
        .waitForEvent(chat, (event) => event.kind === "send" && /^Done/.test(event.text ?? ""), {
          timeoutMs: REPLY_TIMEOUT_MS,
        })
        .then(() => {
          try {
            resolve(sim.pressButton(alice, chat, progress.message_id, data).id);
          } catch (error) {
            reject(error);
          }
        }, reject);
    });
    const answer = await sim.waitForCallbackAnswer(pressed, { timeoutMs: REPLY_TIMEOUT_MS });
    expect(answer.text).toBe("That job has already finished.");
  });
});

describe("documents", { timeout: E2E_TIMEOUT_MS, concurrent: true }, () => {
  for (const rangeRequests of [true, false]) {
    it(`answers with the size and SHA-256 (Range ${rangeRequests ? "on" : "off"})`, async () => {
      await using fixture = await launchFixture();
      const { sim, bot } = fixture;
      sim.setRangeRequests(rangeRequests);
      const alice = sim.users.create({ firstName: "Alice" });
      const chat = sim.chats.createPrivate(alice);
      // Several 256 KiB chunks and a ragged tail.
      const bytes = randomBytes(3 * 256 * 1024 + 12_345);
      const sent = sim.sendDocument(alice, chat, { bytes, fileName: "report.bin" });
      const reply = await replyTo(sim, chat, sent, () => true);
      expect(textOf(reply)).toBe(`report.bin: ${bytes.length} bytes, SHA-256 ${sha256(bytes)}`);
      expect(replyId(reply)).toBe(sent.message_id);
      expect(bot.stats().router).toMatchObject({ documents: 1, documentBytes: bytes.length });
      expect(sim.counters().bytesServed).toBe(bytes.length);
    });
  }

  it("explains that a document over 20 MB cannot be downloaded by bots", async () => {
    await using fixture = await launchFixture();
    const { sim, bot } = fixture;
    const alice = sim.users.create({ firstName: "Alice" });
    const chat = sim.chats.createPrivate(alice);
    const bytes = new Uint8Array(20 * 1024 * 1024 + 1);
    const sent = sim.sendDocument(alice, chat, { bytes, fileName: "huge.iso" });
    const reply = await replyTo(sim, chat, sent, () => true);
    expect(textOf(reply)).toBe("huge.iso is larger than the 20 MB the Bot API lets bots download.");
    expect(sim.counters().bytesServed).toBe(0);
    expect(bot.stats().router.documents).toBe(0);
  });

  it("answers a tiny document too", async () => {
    await using fixture = await launchFixture();
    const { sim } = fixture;
    const alice = sim.users.create({ firstName: "Alice" });
    const chat = sim.chats.createPrivate(alice);
    const bytes = new TextEncoder().encode("x");
    const sent = sim.sendDocument(alice, chat, { bytes, fileName: "x.txt" });
    const reply = await replyTo(sim, chat, sent, () => true);
    expect(textOf(reply)).toBe(`x.txt: 1 bytes, SHA-256 ${sha256(bytes)}`);
  });
});

describe("/file", { timeout: E2E_TIMEOUT_MS, concurrent: true }, () => {
  it("sends an N-KiB document whose bytes match the SHA-256 in its caption", async () => {
    await using fixture = await launchFixture();
    const { sim, bot } = fixture;
    const alice = sim.users.create({ firstName: "Alice" });
    const chat = sim.chats.createPrivate(alice);
    for (const kib of [1, 300]) {
      const sent = sim.sendCommand(alice, chat, "file", String(kib));
      const reply = await replyTo(sim, chat, sent, (m) => "document" in m);
      if (!("document" in reply)) throw new Error("expected a document");
      expect(replyId(reply)).toBe(sent.message_id);
      expect(reply.document.file_name).toBe(`generated-${kib}KiB.bin`);
      expect(reply.document.file_size).toBe(kib * 1024);
      const claimed = /^(\d+) KiB, SHA-256 ([0-9a-f]{64})$/.exec(textOf(reply));
      expect(claimed?.[1]).toBe(String(kib));
      const bytes = await downloadFromSim(sim, reply.document.file_id);
      expect(bytes.length).toBe(kib * 1024);
      expect(sha256(bytes)).toBe(claimed?.[2]);
    }
    expect(bot.stats().router).toMatchObject({ filesSent: 2, fileBytes: 301 * 1024 });
  });

  it("answers bad sizes with the usage text", async () => {
    await using fixture = await launchFixture();
    const { sim, bot } = fixture;
    const alice = sim.users.create({ firstName: "Alice" });
    const chat = sim.chats.createPrivate(alice);
    const usage = `Usage: /file <KiB>, with 1 to ${MAX_FILE_KIB} KiB.`;
    for (const args of ["", "0", String(MAX_FILE_KIB + 1), "big", "2.5"]) {
      const sent = sim.sendCommand(alice, chat, "file", args);
      expect(textOf(await replyTo(sim, chat, sent, () => true))).toBe(usage);
    }
    expect(bot.stats().router.filesSent).toBe(0);
    expect(sim.counters().calls.sendDocument ?? 0).toBe(0);
  });
});
