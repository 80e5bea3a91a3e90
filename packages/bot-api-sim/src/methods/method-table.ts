// Which Bot API methods the simulator implements, and by which handler. Every other real method
// answers a clear 400; a name that is no method at all answers 404.

import type { MethodContext } from "./bot-messages.js";
import {
  answerCallbackQuery,
  deleteMyCommands,
  getChat,
  getMe,
  getMyCommands,
  setMyCommands,
} from "./chat-methods.js";
import { sendMessageDraft } from "./draft-methods.js";
import { getFile, sendDocument, sendPhoto } from "./file-methods.js";
import type { BotApiMethod } from "./known-methods.js";
import {
  deleteMessage,
  deleteMessages,
  editMessageCaption,
  editMessageReplyMarkup,
  editMessageText,
  sendChatAction,
  sendMessage,
} from "./message-methods.js";
import { getUpdates, getWebhookInfo, setWebhook } from "./update-methods.js";

/** A method implementation: returns the result (or an ApiSuccess) or throws an ApiFailure. */
type MethodHandler = (ctx: MethodContext) => unknown;

/** The implemented methods. */
export const METHOD_HANDLERS: ReadonlyMap<BotApiMethod, MethodHandler> = new Map<
  BotApiMethod,
  MethodHandler
>([
  ["getMe", getMe],
  ["getUpdates", getUpdates],
  ["setWebhook", setWebhook],
  ["deleteWebhook", setWebhook],
  ["getWebhookInfo", getWebhookInfo],
  ["sendMessage", sendMessage],
  ["sendMessageDraft", sendMessageDraft],
  ["editMessageText", editMessageText],
  ["editMessageCaption", editMessageCaption],
  ["editMessageReplyMarkup", editMessageReplyMarkup],
  ["deleteMessage", deleteMessage],
  ["deleteMessages", deleteMessages],
  ["sendDocument", sendDocument],
  ["sendPhoto", sendPhoto],
  ["getFile", getFile],
  ["answerCallbackQuery", answerCallbackQuery],
  ["sendChatAction", sendChatAction],
  ["getChat", getChat],
  ["setMyCommands", setMyCommands],
  ["getMyCommands", getMyCommands],
  ["deleteMyCommands", deleteMyCommands],
]);

/** Names of the implemented methods, sorted, for documentation and error texts. */
export const IMPLEMENTED_METHODS: readonly BotApiMethod[] = Object.freeze(
  [...METHOD_HANDLERS.keys()].sort(),
);
