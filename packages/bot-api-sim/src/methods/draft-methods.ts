// sendMessageDraft: a bot streams the text of a message it is still generating into a private
// chat. Shown for 30 s after each write; the same draft id animates, a new one replaces; empty
// text shows "Thinking…"; only sendMessage (or any other message of the bot) makes it permanent.

import { characterLength, formatText, MAX_TEXT_LENGTH } from "../text/formatted-text.js";
import { badRequest } from "../wire/api-failure.js";
import { checkFlood, type MethodContext } from "./bot-messages.js";
import { chatForBot } from "./chat-access.js";

/** sendMessageDraft */
export function sendMessageDraft(ctx: MethodContext): true {
  const { world, bot, params } = ctx;
  // As the real server does, the text and its formatting are read before the chat.
  const text = formatText({
    text: params.text("text"),
    parseMode: params.get("parse_mode"),
    entities: params.get("entities"),
  });
  if (characterLength(text.text) > MAX_TEXT_LENGTH) throw badRequest("message is too long");
  const chat = chatForBot(world, bot, params.get("chat_id"), "write");
  if (chat.kind !== "private") throw badRequest("TEXTDRAFT_PEER_INVALID");
  // The draft id travels as the random id of the user's "typing a draft" action.
  const draftId = params.long("draft_id");
  if (draftId === 0) throw badRequest("RANDOM_ID_INVALID");
  checkFlood(ctx, chat, "draft");
  const threadId = params.long("message_thread_id");
  const { change, draft } = chat.draft.write(
    {
      draftId,
      text: text.text,
      entities: text.entities,
      messageThreadId: threadId === 0 ? undefined : threadId,
      canStop: params.bool("can_stop"),
      keepOnStop: params.bool("keep_on_stop"),
    },
    world.now(),
  );
  world.counters.add("draftFrames");
  world.record(chat, {
    kind: "draft",
    actor: "bot",
    actorId: bot.id,
    method: ctx.method,
    draftId,
    draftChange: change,
    text: draft.text,
    draft,
  });
  return true;
}
