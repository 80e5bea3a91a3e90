// The control API for chats: private chats, groups and supergroups, members and bots joining and
// leaving, and the upgrade of a group to a supergroup — each with the service messages and
// member updates Telegram would send.

import type { Chat, User } from "@grammyjs/types";
import { checkOptions } from "@telepace/core";
import { BotApiSimError } from "../errors.js";
import { botAsUser } from "../world/bot-record.js";
import { type ChatRecord, isPresent, type MemberStatus } from "../world/chat-record.js";
import type { BotRef, ChatRef, SimWorld, UserRef } from "../world/sim-world.js";
import type { BotOption } from "./sim-users.js";
import {
  botMemberUpdate,
  postUserMessage,
  presentBots,
  userMemberUpdate,
} from "./user-messages.js";

/** Options of {@link SimChats.createPrivate}. */
export interface CreatePrivateOptions extends BotOption {
  /**
   * Whether the user has opened the chat. When false the bot cannot write first and gets 403
   * "bot can't initiate conversation with a user" until the user writes. @defaultValue true
   */
  readonly started?: boolean;
}

/** Options of {@link SimChats.createGroup} and {@link SimChats.createSupergroup}. */
export interface CreateGroupOptions {
  /** @defaultValue `"Group <n>"` */
  readonly title?: string;
  /** The users in the group; at least one (the creator when `creator` is not given). */
  readonly members: readonly UserRef[];
  /** The owner. @defaultValue `members[0]` */
  readonly creator?: UserRef;
  /** The bots in the group. @defaultValue the first bot */
  readonly bots?: readonly BotRef[];
  /** Whether the bots are administrators (then they see every message). @defaultValue false */
  readonly botsAreAdmins?: boolean;
}

/** Who performs a member change. */
export interface ByOption {
  /** The user performing the change. @defaultValue the member themself, or the chat's creator */
  readonly by?: UserRef;
}

/** Options of {@link SimChats.addBot}. */
export interface AddBotOptions extends BotOption, ByOption {
  /** Add as administrator. @defaultValue false */
  readonly asAdmin?: boolean;
}

/** Options of {@link SimChats.removeMember} and {@link SimChats.removeBot}. */
export interface RemoveOptions extends ByOption, BotOption {
  /** Ban ("kicked") instead of a plain removal ("left"). @defaultValue false */
  readonly ban?: boolean;
}

/** Simulated chats (`sim.chats`). */
export class SimChats {
  readonly #world: SimWorld;
  #groups = 0;

  /** @internal */
  constructor(world: SimWorld) {
    this.#world = world;
  }

  /**
   * The private chat of a user with a bot (created if needed). Its id is the user's id.
   * @example const chat = sim.chats.createPrivate(alice);
   */
  createPrivate(user: UserRef, options: CreatePrivateOptions = {}): Chat {
    checkOptions("options", options, ["bot", "started"]);
    const world = this.#world;
    world.assertOpen();
    const bot = world.resolveBot(options.bot);
    const chat = world.privateChat(bot, world.user(user), { started: options.started ?? true });
    return world.chatObject(chat as ChatRecord);
  }

  /** A basic group; each bot gets `my_chat_member` and a `group_chat_created` message. */
  createGroup(options: CreateGroupOptions): Chat {
    return this.#create("group", options);
  }

  /** A supergroup; each bot gets `my_chat_member` and a `new_chat_members` message. */
  createSupergroup(options: CreateGroupOptions): Chat {
    return this.#create("supergroup", options);
  }

  /** The chat as bots see it now (title, type), by object or id. */
  get(chat: ChatRef, options: BotOption = {}): Chat {
    checkOptions("options", options, ["bot"]);
    return this.#world.chatObject(this.#world.resolveChat(chat, options.bot));
  }

  /** A user's or bot's membership status in a group, or `undefined` when never a member. */
  memberStatus(chat: ChatRef, member: UserRef | BotRef): MemberStatus | undefined {
    const record = this.#group(chat);
    if (typeof member === "object") return record.members.get(member.id);
    return record.members.get(member as number) ?? record.bots.get(member as number);
  }

  /**
   * Upgrades a basic group to a supergroup, as Telegram does when a group grows: the bots get a
   * `migrate_to_chat_id` message in the old group and a `migrate_from_chat_id` message in the new
   * one, and sends to the old id fail with 400 and `parameters.migrate_to_chat_id`.
   */
  migrateToSupergroup(chat: ChatRef, options: ByOption = {}): Chat {
    checkOptions("options", options, ["by"]);
    const world = this.#world;
    world.assertOpen();
    const group = this.#group(chat);
    if (group.kind !== "group" || group.migratedTo !== undefined) {
      throw new BotApiSimError(
        "ERR_INVALID_STATE",
        `Chat ${group.id} is not a basic group that can be upgraded`,
      );
    }
    const by = this.#actor(group, options.by);
    const bots = presentBots(world, group);
    world.ensureRoom(bots, "message", 2);
    const supergroup = world.createGroupRecord("supergroup", group.title ?? "");
    for (const [id, status] of group.members) supergroup.members.set(id, status);
    for (const [id, status] of group.bots) supergroup.bots.set(id, status);
    group.migratedTo = supergroup.id;
    supergroup.migratedFrom = group.id;
    postUserMessage(world, group, by, { migrate_to_chat_id: supergroup.id }, () => bots);
    postUserMessage(world, supergroup, by, { migrate_from_chat_id: group.id }, () => bots);
    return world.chatObject(supergroup);
  }

  /** A user joins (or is added by `by`): `new_chat_members` for the bots, `chat_member` for admin bots. */
  addMember(chat: ChatRef, user: UserRef, options: ByOption = {}): void {
    checkOptions("options", options, ["by"]);
    const world = this.#world;
    world.assertOpen();
    const group = this.#writableGroup(chat);
    const member = world.user(user);
    const before = group.members.get(member.id) ?? "left";
    if (isPresent(before)) return;
    const by = options.by === undefined ? member : world.user(options.by);
    userMemberUpdate(world, group, by, member, before, "member");
    group.members.set(member.id, "member");
    postUserMessage(world, group, by, { new_chat_members: [member] }, () =>
      presentBots(world, group),
    );
  }

  /** A user leaves (or is removed by `by`): `left_chat_member` for the bots, `chat_member` for admin bots. */
  removeMember(chat: ChatRef, user: UserRef, options: RemoveOptions = {}): void {
    checkOptions("options", options, ["by", "bot", "ban"]);
    const world = this.#world;
    world.assertOpen();
    const group = this.#writableGroup(chat);
    const member = world.user(user);
    const before = group.members.get(member.id);
    if (!isPresent(before)) {
      throw new BotApiSimError("ERR_NOT_A_MEMBER", `User ${member.id} is not in chat ${group.id}`);
    }
    const by = options.by === undefined ? member : world.user(options.by);
    const after: MemberStatus = options.ban === true ? "kicked" : "left";
    userMemberUpdate(world, group, by, member, before as MemberStatus, after);
    group.members.set(member.id, after);
    postUserMessage(world, group, by, { left_chat_member: member }, () =>
      presentBots(world, group),
    );
  }

  /** A user adds a bot: the bot gets `my_chat_member`, the bots then a `new_chat_members` message. */
  addBot(chat: ChatRef, options: AddBotOptions = {}): void {
    checkOptions("options", options, ["bot", "by", "asAdmin"]);
    const world = this.#world;
    world.assertOpen();
    const group = this.#writableGroup(chat);
    const bot = world.resolveBot(options.bot);
    if (!bot.user.can_join_groups) {
      throw new BotApiSimError(
        "ERR_INVALID_STATE",
        `Bot ${bot.id} cannot join groups (canJoinGroups: false)`,
      );
    }
    const before = group.bots.get(bot.id) ?? "left";
    if (isPresent(before)) return;
    const by = this.#actor(group, options.by);
    const after: MemberStatus = options.asAdmin === true ? "administrator" : "member";
    world.ensureRoom([...presentBots(world, group), bot], "message", 2);
    botMemberUpdate(world, group, bot, by, before, after);
    group.bots.set(bot.id, after);
    postUserMessage(world, group, by, { new_chat_members: [botAsUser(bot)] }, () =>
      presentBots(world, group),
    );
  }

  /** A user removes a bot: the bot gets `my_chat_member`; it can no longer write there (403). */
  removeBot(chat: ChatRef, options: RemoveOptions = {}): void {
    checkOptions("options", options, ["by", "bot", "ban"]);
    const world = this.#world;
    world.assertOpen();
    const group = this.#writableGroup(chat);
    const bot = world.resolveBot(options.bot);
    const before = group.bots.get(bot.id);
    if (!isPresent(before)) {
      throw new BotApiSimError("ERR_NOT_A_MEMBER", `Bot ${bot.id} is not in chat ${group.id}`);
    }
    const by = this.#actor(group, options.by);
    const after: MemberStatus = options.ban === true ? "kicked" : "left";
    botMemberUpdate(world, group, bot, by, before as MemberStatus, after);
    group.bots.set(bot.id, after);
    postUserMessage(world, group, by, { left_chat_member: botAsUser(bot) }, () =>
      presentBots(world, group),
    );
  }

  /** Promotes or demotes a bot; it gets `my_chat_member`. Administrators see every message. */
  setBotAdmin(chat: ChatRef, isAdmin: boolean, options: BotOption & ByOption = {}): void {
    checkOptions("options", options, ["bot", "by"]);
    const world = this.#world;
    world.assertOpen();
    const group = this.#writableGroup(chat);
    const bot = world.resolveBot(options.bot);
    const before = group.bots.get(bot.id);
    if (!isPresent(before)) {
      throw new BotApiSimError("ERR_NOT_A_MEMBER", `Bot ${bot.id} is not in chat ${group.id}`);
    }
    const after: MemberStatus = isAdmin ? "administrator" : "member";
    if (before === after) return;
    botMemberUpdate(
      world,
      group,
      bot,
      this.#actor(group, options.by),
      before as MemberStatus,
      after,
    );
    group.bots.set(bot.id, after);
  }

  #create(kind: "group" | "supergroup", options: CreateGroupOptions): Chat {
    const world = this.#world;
    world.assertOpen();
    if (typeof options !== "object" || options === null || !Array.isArray(options.members)) {
      throw new TypeError("Expected `options.members` to be an array of users");
    }
    checkOptions("options", options, ["title", "members", "creator", "bots", "botsAreAdmins"]);
    const members = options.members.map((member) => world.user(member));
    const creator = options.creator === undefined ? members[0] : world.user(options.creator);
    if (creator === undefined) {
      throw new RangeError("Expected `options.members` to hold at least one user, got []");
    }
    const bots = (options.bots ?? [undefined]).map((ref) => world.resolveBot(ref));
    for (const bot of bots) {
      if (!bot.user.can_join_groups) {
        throw new BotApiSimError(
          "ERR_INVALID_STATE",
          `Bot ${bot.id} cannot join groups (canJoinGroups: false)`,
        );
      }
    }
    // A my_chat_member and a service message per bot: check both fit before changing anything.
    world.ensureRoom(bots, "message", 2);
    const title = options.title ?? `Group ${++this.#groups}`;
    if (typeof title !== "string" || title.length === 0 || title.length > 128) {
      throw new RangeError(
        `Expected \`title\` to be a string of 1–128 characters, got ${JSON.stringify(title)}`,
      );
    }
    const group = world.createGroupRecord(kind, title);
    group.members.set(creator.id, "creator");
    for (const member of members)
      if (member.id !== creator.id) group.members.set(member.id, "member");
    const status: MemberStatus = options.botsAreAdmins === true ? "administrator" : "member";
    for (const bot of bots) {
      group.bots.set(bot.id, status);
      botMemberUpdate(world, group, bot, creator, "left", status);
    }
    const content =
      kind === "group"
        ? { group_chat_created: true }
        : { new_chat_members: bots.map((bot) => botAsUser(bot)) };
    postUserMessage(world, group, creator, content, () => bots);
    return world.chatObject(group);
  }

  #group(ref: ChatRef): ChatRecord {
    const chat = this.#world.resolveChat(ref);
    if (chat.kind === "private") {
      throw new BotApiSimError(
        "ERR_INVALID_STATE",
        `Chat ${chat.id} is a private chat, not a group`,
      );
    }
    return chat;
  }

  #writableGroup(ref: ChatRef): ChatRecord {
    const chat = this.#group(ref);
    if (chat.migratedTo !== undefined) {
      throw new BotApiSimError(
        "ERR_INVALID_STATE",
        `Group ${chat.id} was upgraded to supergroup ${chat.migratedTo}; use that chat`,
      );
    }
    return chat;
  }

  /** The acting user: `by`, else the chat's creator, else any member. */
  #actor(chat: ChatRecord, by: UserRef | undefined): User {
    if (by !== undefined) return this.#world.user(by);
    for (const [id, status] of chat.members) {
      if (status === "creator") return this.#world.user(id);
    }
    for (const [id, status] of chat.members) {
      if (isPresent(status)) return this.#world.user(id);
    }
    throw new BotApiSimError(
      "ERR_INVALID_STATE",
      `Chat ${chat.id} has no member to act; pass \`by\``,
    );
  }
}
