// Every Bot API method's class: how the outbox schedules it. The table is checked against
// `@grammyjs/types`, so a method added there fails the build until it has a class here.

import type { ApiMethods } from "@grammyjs/types";

/** A Bot API method name, as `@grammyjs/types` lists them. */
export type MethodName = keyof ApiMethods<unknown> & string;

/**
 * How the outbox schedules a method (`planWrite`):
 * - `read`: passes straight through, unpaced (getUpdates, getMe, getFile, getChat…, webhook
 *   and session control);
 * - `send`: a new message in the chat, paced, never coalesced, never blindly resent;
 * - `edit`: a message edit, coalesced per message and method (the newest payload wins), retried
 *   when transient;
 * - `draft`: a draft frame, coalesced per draft (the newest frame wins);
 * - `delete`: a delete, which drops the pending edits of its messages;
 * - `chat-action`: "typing…", kept in the chat's order without a pacing slot; a newer one
 *   replaces a pending one;
 * - `callback-answer`: answered outside every chat's pacing, coalesced per query;
 * - `other`: any other write — kept in order with its `chat_id` when it has one (without a pacing
 *   slot), else paced by the global budget only.
 */
export type MethodClass =
  | "read"
  | "send"
  | "edit"
  | "draft"
  | "delete"
  | "chat-action"
  | "callback-answer"
  | "other";

/** Message edits, whose keys a delete of the same message supersedes. */
export const MESSAGE_EDITS = Object.freeze([
  "editMessageText",
  "editMessageCaption",
  "editMessageMedia",
  "editMessageReplyMarkup",
  "editMessageLiveLocation",
  "stopMessageLiveLocation",
  "editMessageChecklist",
] as const);

/** Ephemeral message edits, which `deleteEphemeralMessage` supersedes. */
export const EPHEMERAL_EDITS = Object.freeze([
  "editEphemeralMessageText",
  "editEphemeralMessageCaption",
  "editEphemeralMessageMedia",
  "editEphemeralMessageReplyMarkup",
] as const);

// `satisfies Record<MethodName, …>` makes the compiler list every method here, and no other.
const classes = {
  addStickerToSet: "other",
  answerCallbackQuery: "callback-answer",
  answerChatJoinRequestQuery: "other",
  answerGuestQuery: "other",
  answerInlineQuery: "other",
  answerPreCheckoutQuery: "other",
  answerShippingQuery: "other",
  answerWebAppQuery: "other",
  approveChatJoinRequest: "other",
  approveSuggestedPost: "other",
  banChatMember: "other",
  banChatSenderChat: "other",
  close: "read",
  closeForumTopic: "other",
  closeGeneralForumTopic: "other",
  convertGiftToStars: "other",
  copyMessage: "send",
  copyMessages: "send",
  createChatInviteLink: "other",
  createChatSubscriptionInviteLink: "other",
  createForumTopic: "other",
  createInvoiceLink: "other",
  createNewStickerSet: "other",
  declineChatJoinRequest: "other",
  declineSuggestedPost: "other",
  deleteAllMessageReactions: "other",
  deleteBusinessMessages: "other",
  deleteChatPhoto: "other",
  deleteChatStickerSet: "other",
  deleteEphemeralMessage: "delete",
  deleteForumTopic: "other",
  deleteMessage: "delete",
  deleteMessageReaction: "other",
  deleteMessages: "delete",
  deleteMyCommands: "other",
  deleteStickerFromSet: "other",
  deleteStickerSet: "other",
  deleteStory: "other",
  deleteWebhook: "read",
  editChatInviteLink: "other",
  editChatSubscriptionInviteLink: "other",
  editEphemeralMessageCaption: "edit",
  editEphemeralMessageMedia: "edit",
  editEphemeralMessageReplyMarkup: "edit",
  editEphemeralMessageText: "edit",
  editForumTopic: "other",
  editGeneralForumTopic: "other",
  editMessageCaption: "edit",
  editMessageChecklist: "edit",
  editMessageLiveLocation: "edit",
  editMessageMedia: "edit",
  editMessageReplyMarkup: "edit",
  editMessageText: "edit",
  editStory: "other",
  editUserStarSubscription: "other",
  exportChatInviteLink: "other",
  forwardMessage: "send",
  forwardMessages: "send",
  getAvailableGifts: "read",
  getBusinessAccountGifts: "read",
  getBusinessAccountStarBalance: "read",
  getBusinessConnection: "read",
  getChat: "read",
  getChatAdministrators: "read",
  getChatGifts: "read",
  getChatMember: "read",
  getChatMemberCount: "read",
  getChatMembersCount: "read",
  getChatMenuButton: "read",
  getCustomEmojiStickers: "read",
  getFile: "read",
  getForumTopicIconStickers: "read",
  getGameHighScores: "read",
  getManagedBotAccessSettings: "read",
  getManagedBotToken: "read",
  getMe: "read",
  getMyCommands: "read",
  getMyDefaultAdministratorRights: "read",
  getMyDescription: "read",
  getMyName: "read",
  getMyShortDescription: "read",
  getMyStarBalance: "read",
  getStarTransactions: "read",
  getStickerSet: "read",
  getUpdates: "read",
  getUserChatBoosts: "read",
  getUserGifts: "read",
  getUserPersonalChatMessages: "read",
  getUserProfileAudios: "read",
  getUserProfilePhotos: "read",
  getWebhookInfo: "read",
  giftPremiumSubscription: "other",
  hideGeneralForumTopic: "other",
  kickChatMember: "other",
  leaveChat: "other",
  logOut: "read",
  pinChatMessage: "other",
  postStory: "other",
  promoteChatMember: "other",
  readBusinessMessage: "other",
  refundStarPayment: "other",
  removeBusinessAccountProfilePhoto: "other",
  removeChatVerification: "other",
  removeMyProfilePhoto: "other",
  removeUserVerification: "other",
  reopenForumTopic: "other",
  reopenGeneralForumTopic: "other",
  replaceManagedBotToken: "other",
  replaceStickerInSet: "other",
  repostStory: "other",
  restrictChatMember: "other",
  revokeChatInviteLink: "other",
  savePreparedInlineMessage: "other",
  savePreparedKeyboardButton: "other",
  sendAnimation: "send",
  sendAudio: "send",
  sendChatAction: "chat-action",
  sendChatJoinRequestWebApp: "other",
  sendChecklist: "send",
  sendContact: "send",
  sendDice: "send",
  sendDocument: "send",
  sendGame: "send",
  sendGift: "other",
  sendInvoice: "send",
  sendLivePhoto: "send",
  sendLocation: "send",
  sendMediaGroup: "send",
  sendMessage: "send",
  sendMessageDraft: "draft",
  sendPaidMedia: "send",
  sendPhoto: "send",
  sendPoll: "send",
  sendRichMessage: "send",
  sendRichMessageDraft: "draft",
  sendSticker: "send",
  sendVenue: "send",
  sendVideo: "send",
  sendVideoNote: "send",
  sendVoice: "send",
  setBusinessAccountBio: "other",
  setBusinessAccountGiftSettings: "other",
  setBusinessAccountName: "other",
  setBusinessAccountProfilePhoto: "other",
  setBusinessAccountUsername: "other",
  setChatAdministratorCustomTitle: "other",
  setChatDescription: "other",
  setChatMemberTag: "other",
  setChatMenuButton: "other",
  setChatPermissions: "other",
  setChatPhoto: "other",
  setChatStickerSet: "other",
  setChatTitle: "other",
  setCustomEmojiStickerSetThumbnail: "other",
  setGameScore: "other",
  setManagedBotAccessSettings: "other",
  setMessageReaction: "other",
  setMyCommands: "other",
  setMyDefaultAdministratorRights: "other",
  setMyDescription: "other",
  setMyName: "other",
  setMyProfilePhoto: "other",
  setMyShortDescription: "other",
  setPassportDataErrors: "other",
  setStickerEmojiList: "other",
  setStickerKeywords: "other",
  setStickerMaskPosition: "other",
  setStickerPositionInSet: "other",
  setStickerSetThumbnail: "other",
  setStickerSetTitle: "other",
  setUserEmojiStatus: "other",
  setWebhook: "read",
  stopMessageLiveLocation: "edit",
  stopPoll: "other",
  transferBusinessAccountStars: "other",
  transferGift: "other",
  unbanChatMember: "other",
  unbanChatSenderChat: "other",
  unhideGeneralForumTopic: "other",
  unpinAllChatMessages: "other",
  unpinAllForumTopicMessages: "other",
  unpinAllGeneralForumTopicMessages: "other",
  unpinChatMessage: "other",
  upgradeGift: "other",
  uploadStickerFile: "other",
  verifyChat: "other",
  verifyUser: "other",
} as const satisfies Record<MethodName, MethodClass>;

/** Every method's class, frozen. */
export const methodClasses = Object.freeze(classes);

/** A method that goes through the outbox: every one but the reads. */
export type WriteMethodName = {
  [M in MethodName]: (typeof methodClasses)[M] extends "read" ? never : M;
}[MethodName];

/**
 * The class of a method. A name the table does not know (a method newer than the installed
 * `@grammyjs/types`) is `read` when it starts with `get`, else `other`.
 */
export function classOfMethod(method: string): MethodClass {
  if (Object.hasOwn(methodClasses, method)) return methodClasses[method as MethodName];
  return /^get[A-Z]/.test(method) ? "read" : "other";
}
