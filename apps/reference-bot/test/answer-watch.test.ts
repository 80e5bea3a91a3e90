// What the demo's crowd waits for before it presses Stop on an /ask answer, against the sim over
// real HTTP: a draft with text and a Stop button, or — when drafts waited behind other replies
// and the answer arrived first — the answer itself, which leaves nothing to stop.

import { type BotApiSim, start } from "@telepace/bot-api-sim";
import { afterEach, describe, expect, it } from "vitest";
import { ANSWER_HEADER } from "../src/ask-answers.js";
import { awaitStopChance } from "../src/demo/answer-watch.js";

let sim: BotApiSim | undefined;
afterEach(async () => {
  await sim?.close();
  sim = undefined;
});

/** The bot's side: one Bot API call, as the bot's outbox would make it. */
async function call(method: string, params: Record<string, unknown>): Promise<void> {
  const running = sim as BotApiSim;
  const response = await fetch(`${running.apiRoot}/bot${running.token}/${method}`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(params),
  });
  expect(await response.json()).toMatchObject({ ok: true });
}

async function privateChat() {
  sim = await start({ rateLimits: false });
  const user = sim.users.create({ firstName: "Emil" });
  return { user, chat: sim.chats.createPrivate(user) };
}

describe("awaitStopChance", () => {
  it("finds the draft to press Stop on once it shows text", async () => {
    const { chat } = await privateChat();
    const chance = awaitStopChance(sim as BotApiSim, chat, 5_000);
    await call("sendMessageDraft", { chat_id: chat.id, draft_id: 7, text: "", can_stop: true });
    await call("sendMessageDraft", {
      chat_id: chat.id,
      draft_id: 7,
      text: `${ANSWER_HEADER} “why?”: because`,
      can_stop: true,
    });
    expect(await chance).toBe("draft");
  });

  it("takes the answer arriving before any draft with text as nothing left to stop", async () => {
    const { chat } = await privateChat();
    const chance = awaitStopChance(sim as BotApiSim, chat, 5_000);
    // "Thinking…" (an empty draft) and then the whole answer: the frames in between never got a
    // slot. This is what the scale demo's seed 11 did at its start.
    await call("sendMessageDraft", { chat_id: chat.id, draft_id: 7, text: "", can_stop: true });
    await call("sendMessage", { chat_id: chat.id, text: `${ANSWER_HEADER} “why?”: because.` });
    expect(await chance).toBe("answer");
  });

  it("ignores other messages and drafts without a Stop button, then gives up", async () => {
    const { chat } = await privateChat();
    const chance = awaitStopChance(sim as BotApiSim, chat, 300);
    await call("sendMessage", { chat_id: chat.id, text: "You said: hi" });
    await call("sendMessageDraft", { chat_id: chat.id, draft_id: 8, text: "no stop here" });
    expect(await chance).toBe("nothing");
  });
});
