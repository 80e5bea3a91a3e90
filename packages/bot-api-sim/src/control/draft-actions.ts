// The user's side of a message draft: pressing the Stop button of a draft the bot sent with
// can_stop. The bot gets a stopped_message_generation update; the draft disappears, or stays
// without its button when the bot asked for keep_on_stop.

import type { MessageGenerationStopped } from "@grammyjs/types";
import { checkOptions } from "@telepace/core";
import { BotApiSimError } from "../errors.js";
import { deepFreeze } from "../world/deep-freeze.js";
import type { ChatRef, SimWorld, UserRef } from "../world/sim-world.js";
import type { BotOption } from "./sim-users.js";

/**
 * A user presses Stop on the draft shown in their private chat with a bot. Throws
 * `ERR_INVALID_STATE` when no draft is shown, `ERR_NO_SUCH_BUTTON` when it has no Stop button
 * (sent without `can_stop`, or already stopped and kept), and `ERR_UPDATE_QUEUE_FULL` (nothing
 * changes then) when the bot's queue is full.
 */
export function stopDraft(
  world: SimWorld,
  user: UserRef,
  chat: ChatRef,
  options: BotOption = {},
): MessageGenerationStopped {
  checkOptions("options", options, ["bot"]);
  world.assertOpen();
  const sender = world.user(user);
  const record = world.resolveChat(chat, options.bot);
  if (record.kind !== "private") {
    throw new BotApiSimError("ERR_INVALID_STATE", `Chat ${record.id} is not a private chat`);
  }
  if (record.user?.id !== sender.id) {
    throw new BotApiSimError(
      "ERR_NOT_A_MEMBER",
      `Chat ${record.id} is another user's private chat`,
    );
  }
  const bot = world.botById(record.botId as number);
  const draft = record.draft.stoppable(world.now());
  if (draft === "no-draft") {
    throw new BotApiSimError("ERR_INVALID_STATE", `No draft is shown in chat ${record.id}`);
  }
  if (draft === "no-stop-button" || bot === undefined) {
    throw new BotApiSimError(
      "ERR_NO_SUCH_BUTTON",
      `The draft in chat ${record.id} has no Stop button (sent without can_stop, or already stopped)`,
    );
  }
  const stopped: MessageGenerationStopped = deepFreeze({
    chat: record.chat() as MessageGenerationStopped["chat"],
    ...(draft.messageThreadId === undefined ? {} : { message_thread_id: draft.messageThreadId }),
    draft_id: draft.draftId,
  });
  world.deliver([bot], "stopped_message_generation", () => stopped);
  record.draft.stop(draft);
  world.counters.add("draftsStopped");
  world.record(record, {
    kind: "draft_stop",
    actor: "user",
    actorId: sender.id,
    draftId: draft.draftId,
    text: draft.text,
  });
  return stopped;
}
