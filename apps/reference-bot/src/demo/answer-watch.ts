// How the crowd sees a streamed /ask answer: a draft with text, or a message of the answer. Under
// load the answer's message can come before any draft with text: frames go out at edit priority,
// behind every reply of every chat, and the final replaces the frames it overtakes. Then the user
// only ever saw "Thinking…" and has nothing to press Stop on.

import type { BotApiSim, ChatRef, TranscriptEvent } from "@telepace/bot-api-sim";
import { ANSWER_HEADER } from "../ask-answers.js";

/** A draft frame that shows some of the answer (not the empty "Thinking…" one). */
function isDraftWithText(event: TranscriptEvent): boolean {
  return event.kind === "draft" && event.text !== undefined && event.text !== "";
}

/** A message of the answer as the bot sent or edited it. */
function isAnswerMessage(event: TranscriptEvent): boolean {
  return (
    event.actor === "bot" &&
    (event.kind === "send" || event.kind === "edit") &&
    (event.text ?? "").startsWith(ANSWER_HEADER)
  );
}

/** Whether the answer now shows something to the user: its latency ends here. */
export function showsAnswer(event: TranscriptEvent): boolean {
  return isDraftWithText(event) || isAnswerMessage(event);
}

/** What a user who means to press Stop found first. */
export type StopChance = "draft" | "answer" | "nothing";

/**
 * Waits for the first thing a user could stop: a draft with text and a Stop button (`"draft"`),
 * or the answer's message arriving before any such draft (`"answer"`: nothing left to stop).
 * `"nothing"` when neither came within `timeoutMs`.
 */
export async function awaitStopChance(
  sim: BotApiSim,
  chat: ChatRef,
  timeoutMs: number,
): Promise<StopChance> {
  try {
    const event = await sim.waitForEvent(
      chat,
      (event) =>
        (isDraftWithText(event) && event.draft?.hasStopButton === true) || isAnswerMessage(event),
      { timeoutMs },
    );
    return event.kind === "draft" ? "draft" : "answer";
  } catch {
    return "nothing";
  }
}
