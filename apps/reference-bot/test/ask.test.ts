// /ask end to end against the sim: a generated answer streamed as drafts into a private chat and
// ending in real messages, the Stop button cutting it short, and a progress message in a group.

import { describe, expect, it } from "vitest";
import { ANSWER_END, ANSWER_HEADER } from "../src/ask-answers.js";
import { E2E_TIMEOUT_MS, eventually, launchFixture, REPLY_TIMEOUT_MS, textOf } from "./harness.js";

const FAST = { bot: { askTokensPerSecond: 400 } };

describe("/ask", { timeout: E2E_TIMEOUT_MS, concurrent: true }, () => {
  it("streams drafts with a Stop button into a private chat, then the whole answer", async () => {
    await using fixture = await launchFixture(FAST);
    const { sim } = fixture;
    const alice = sim.users.create({ firstName: "Alice" });
    const chat = sim.chats.createPrivate(alice);
    const sent = sim.sendCommand(alice, chat, "ask", "what is pacing?");
    const last = await sim.waitForMessage(chat, (m) => textOf(m).endsWith(ANSWER_END), {
      afterMessageId: sent.message_id,
      timeoutMs: REPLY_TIMEOUT_MS,
    });
    expect(last).toBeDefined();
    const { events, messages } = sim.transcript(chat);
    const drafts = events.filter((event) => event.kind === "draft");
    expect(drafts.length).toBeGreaterThan(2);
    expect(drafts.some((event) => event.draft?.hasStopButton)).toBe(true);
    const answer = messages.filter((m) => m.from?.is_bot).map(textOf);
    expect(answer[0]?.startsWith(`${ANSWER_HEADER} “what is pacing?”`)).toBe(true);
    for (const text of answer) expect(text.length).toBeLessThanOrEqual(4096);
  });

  it("the Stop button ends the answer early with what was generated", async () => {
    await using fixture = await launchFixture({ bot: { askTokensPerSecond: 40 } });
    const { sim } = fixture;
    const bob = sim.users.create({ firstName: "Bob" });
    const chat = sim.chats.createPrivate(bob);
    const sent = sim.sendCommand(bob, chat, "ask", "tell me everything");
    await sim.waitForEvent(
      chat,
      (event) => event.kind === "draft" && event.draft?.hasStopButton === true && event.text !== "",
      { timeoutMs: REPLY_TIMEOUT_MS },
    );
    sim.stopDraft(bob, chat);
    const reply = await sim.waitForMessage(chat, (m) => textOf(m).startsWith(ANSWER_HEADER), {
      afterMessageId: sent.message_id,
      timeoutMs: REPLY_TIMEOUT_MS,
    });
    expect(textOf(reply).endsWith(ANSWER_END)).toBe(false);
    await eventually(
      "the stopped answer is counted",
      () => fixture.bot.stats().answers.stopped === 1,
    );
    expect(fixture.bot.stats().answers).toMatchObject({ stopped: 1, delivered: 1 });
  });

  it("streams into a group as a progress message that the whole answer replaces", async () => {
    await using fixture = await launchFixture(FAST);
    const { sim } = fixture;
    const carol = sim.users.create({ firstName: "Carol" });
    const group = sim.chats.createGroup({ members: [carol] });
    sim.sendCommand(carol, group, "ask", "and in groups?");
    // The whole answer ends up in the progress message: its last edit is the final.
    await sim.waitForEvent(
      group,
      (event) =>
        event.actor === "bot" &&
        (event.kind === "send" || event.kind === "edit") &&
        (event.text ?? "").endsWith(ANSWER_END),
      { timeoutMs: REPLY_TIMEOUT_MS },
    );
    const { events } = sim.transcript(group);
    expect(events.filter((event) => event.kind === "draft")).toHaveLength(0);
  });

  it("without a question answers with the usage", async () => {
    await using fixture = await launchFixture();
    const { sim } = fixture;
    const dan = sim.users.create({ firstName: "Dan" });
    const chat = sim.chats.createPrivate(dan);
    const sent = sim.sendCommand(dan, chat, "ask");
    const reply = await sim.waitForMessage(chat, () => true, {
      afterMessageId: sent.message_id,
      timeoutMs: REPLY_TIMEOUT_MS,
    });
    expect(textOf(reply)).toBe("Usage: /ask <question>");
  });
});
