// One simulated chat: its members (users and bots), its messages in their latest version and its
// transcript. A private chat belongs to one user and one bot; groups may hold several bots.

import type { Chat, Message, User } from "@grammyjs/types";
import { DraftSlot } from "./message-draft.js";
import { ReplyKeyboards } from "./reply-keyboards.js";
import { EventLog } from "./transcript.js";

/** The type of a simulated chat. */
export type ChatKind = "private" | "group" | "supergroup";

/** Membership of a user or bot in a group. */
export type MemberStatus = "creator" | "administrator" | "member" | "left" | "kicked";

/** A message with what the simulator needs to know about it. */
export interface StoredMessage {
  /** The message as it stands now. */
  message: Message;
  /** The bot that sent it, when a bot did. */
  readonly senderBotId: number | undefined;
  /** `clock.now()` when it was sent, for the 48-hour delete window. */
  readonly sentAtMs: number;
  /** Bots that received it as an update, so they also receive its edits. */
  readonly seenBy: Set<number>;
}

/** Whether a status means "in the chat". */
export function isPresent(status: MemberStatus | undefined): boolean {
  return status === "creator" || status === "administrator" || status === "member";
}

/** A simulated chat. */
export class ChatRecord {
  /** Unique key inside the simulator (private chats of several bots share a chat id). */
  readonly key: string;
  readonly id: number;
  readonly kind: ChatKind;
  title: string | undefined;
  /** The user of a private chat. */
  readonly user: User | undefined;
  /** The bot of a private chat. */
  readonly botId: number | undefined;
  /** Private chat: the user has opened the chat (a bot may write). */
  started: boolean;
  /** Private chat: the user blocked the bot. */
  blocked = false;
  readonly members = new Map<number, MemberStatus>();
  readonly bots = new Map<number, MemberStatus>();
  /** Basic group upgraded to this supergroup id. */
  migratedTo: number | undefined;
  /** Supergroup upgraded from this basic group id. */
  migratedFrom: number | undefined;
  readonly messages = new Map<number, StoredMessage>();
  /** Private chat: the bot's live message draft (sendMessageDraft). */
  readonly draft = new DraftSlot();
  /** The reply keyboards the bots' messages left shown to the chat's users. */
  readonly replyKeyboards = new ReplyKeyboards();
  readonly log: EventLog;
  readonly chatInstance: string;
  /** The simulator-wide event `seq` when the chat was created: it is newer than every event up to it. */
  readonly createdAfterSeq: number;
  #nextMessageId = 1;
  #forgotten = 0;
  #newest: StoredMessage | undefined;

  constructor(init: {
    readonly key: string;
    readonly id: number;
    readonly kind: ChatKind;
    readonly title?: string | undefined;
    readonly user?: User | undefined;
    readonly botId?: number | undefined;
    readonly started?: boolean | undefined;
    readonly maxTranscriptEvents: number;
    readonly chatInstance: string;
    readonly createdAfterSeq: number;
  }) {
    this.key = init.key;
    this.id = init.id;
    this.kind = init.kind;
    this.title = init.title;
    this.user = init.user;
    this.botId = init.botId;
    this.started = init.started ?? true;
    this.log = new EventLog(init.maxTranscriptEvents);
    this.chatInstance = init.chatInstance;
    this.createdAfterSeq = init.createdAfterSeq;
  }

  /** Whether this is a group or supergroup. */
  get isGroup(): boolean {
    return this.kind !== "private";
  }

  /** Messages forgotten because the chat held `maxMessagesPerChat`. */
  get forgottenMessages(): number {
    return this.#forgotten;
  }

  /** The Chat object as bots see it. */
  chat(): Chat {
    if (this.kind === "private") {
      const user = this.user as User;
      const chat: Chat.PrivateChat = { id: this.id, type: "private", first_name: user.first_name };
      if (user.last_name !== undefined) chat.last_name = user.last_name;
      if (user.username !== undefined) chat.username = user.username;
      return chat;
    }
    return this.kind === "group"
      ? { id: this.id, type: "group", title: this.title ?? "" }
      : { id: this.id, type: "supergroup", title: this.title ?? "" };
  }

  /** Allocates the next message id of this chat. */
  allocateMessageId(): number {
    return this.#nextMessageId++;
  }

  /** The message with the highest id that is still kept (edits included), or `undefined`. */
  newestMessage(): StoredMessage | undefined {
    const cached = this.#newest;
    if (cached !== undefined && this.messages.get(cached.message.message_id) === cached) {
      return cached;
    }
    // The newest was deleted (or forgotten): find the next one once, then serve it from here.
    let newest: StoredMessage | undefined;
    for (const stored of this.messages.values()) newest = stored;
    this.#newest = newest;
    return newest;
  }

  /** Stores a new message, forgetting the oldest beyond `limit`. */
  store(stored: StoredMessage, limit: number): void {
    this.messages.set(stored.message.message_id, stored);
    this.#newest = stored;
    while (this.messages.size > limit) {
      const oldest = this.messages.keys().next().value as number;
      this.messages.delete(oldest);
      this.#forgotten++;
    }
  }
}

/** A message without its own `reply_to_message`, as Telegram nests replies one level deep. */
export function shallow(message: Message): Message {
  const { reply_to_message: _ignored, ...rest } = message as Message & {
    reply_to_message?: unknown;
  };
  return rest as Message;
}
