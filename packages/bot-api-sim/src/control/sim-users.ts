// The control API for simulated users: create them, and let them block or unblock a bot (which
// the bot learns through my_chat_member and, when it writes, a 403).

import type { User } from "@grammyjs/types";
import { checkOptions } from "@telepace/core";
import { BotApiSimError } from "../errors.js";
import type { BotRef, SimWorld, UserRef } from "../world/sim-world.js";
import { botMemberUpdate } from "./user-messages.js";

/** Options of {@link SimUsers.create}. */
export interface CreateUserOptions {
  /** @defaultValue `"User <n>"` */
  readonly firstName?: string;
  readonly lastName?: string;
  /** Without `@`. */
  readonly username?: string;
  /** IETF language tag. @defaultValue `"en"` */
  readonly languageCode?: string;
  /** @defaultValue false */
  readonly isPremium?: boolean;
}

/** Which bot an action concerns; the first bot when omitted. */
export interface BotOption {
  readonly bot?: BotRef;
}

function checkName(name: string, value: unknown): void {
  if (
    value !== undefined &&
    (typeof value !== "string" || value.length === 0 || value.length > 64)
  ) {
    throw new RangeError(
      `Expected \`${name}\` to be a string of 1–64 characters, got ${JSON.stringify(value)}`,
    );
  }
}

/** Simulated users (`sim.users`). */
export class SimUsers {
  readonly #world: SimWorld;

  /** @internal */
  constructor(world: SimWorld) {
    this.#world = world;
  }

  /**
   * Creates a user. Ids are unique, increasing and never collide with bot ids.
   * @example const alice = sim.users.create({ firstName: "Alice", username: "alice" });
   */
  create(options: CreateUserOptions = {}): User {
    checkOptions("options", options, [
      "firstName",
      "lastName",
      "username",
      "languageCode",
      "isPremium",
    ]);
    checkName("firstName", options.firstName);
    checkName("lastName", options.lastName);
    if (options.username !== undefined && !/^[A-Za-z][A-Za-z0-9_]{4,31}$/.test(options.username)) {
      throw new RangeError(
        `Expected \`username\` to be 5–32 characters of [A-Za-z0-9_] starting with a letter, got ${JSON.stringify(options.username)}`,
      );
    }
    return this.#world.createUser(options);
  }

  /** A user by id, or `undefined`. */
  get(id: number): User | undefined {
    return this.#world.userById(id);
  }

  /** Number of users created. */
  get count(): number {
    return this.#world.userCount;
  }

  /**
   * The user blocks the bot: the bot gets `my_chat_member` (status "kicked") and every later send
   * to the user fails with 403 "Forbidden: bot was blocked by the user". The user writing to the
   * bot again unblocks it, as Telegram's "Restart" does.
   */
  block(user: UserRef, options: BotOption = {}): void {
    checkOptions("options", options, ["bot"]);
    this.#setBlocked(user, options, true);
  }

  /** The user unblocks the bot: `my_chat_member` back to "member"; the bot may write again. */
  unblock(user: UserRef, options: BotOption = {}): void {
    checkOptions("options", options, ["bot"]);
    this.#setBlocked(user, options, false);
  }

  /** Whether the user has blocked the bot. */
  isBlocked(user: UserRef, options: BotOption = {}): boolean {
    checkOptions("options", options, ["bot"]);
    const bot = this.#world.resolveBot(options.bot);
    return bot.privateChats.get(this.#world.user(user).id)?.blocked ?? false;
  }

  #setBlocked(ref: UserRef, options: BotOption, blocked: boolean): void {
    const world = this.#world;
    world.assertOpen();
    const user = world.user(ref);
    const bot = world.resolveBot(options.bot);
    const chat = world.privateChat(bot, user, { started: false });
    if (chat === undefined) throw new BotApiSimError("ERR_UNKNOWN_CHAT", "No private chat");
    if (chat.blocked === blocked) return;
    botMemberUpdate(
      world,
      chat,
      bot,
      user,
      blocked ? "member" : "kicked",
      blocked ? "kicked" : "member",
    );
    chat.blocked = blocked;
    if (!blocked) chat.started = true;
  }
}
