// The simulator handle: the API root, the tokens and the control API (users, chats, user actions,
// transcripts, counters, faults) of a running simulator; close() shuts it down within a deadline.

import type {
  CallbackQuery,
  Message,
  MessageGenerationStopped,
  UserFromGetMe,
} from "@grammyjs/types";
import { checkBoolean, checkNumber, checkOptionalNumber, checkOptions } from "@telepace/core";
import { BotApiSimError } from "../errors.js";
import { type RateLimitOptions, type ResolvedOptions, resolveRateLimits } from "../options.js";
import { CONTROL_PREFIX, type SimHttpServer } from "../server/http-server.js";
import type { FaultInjector } from "../wire/faults.js";
import type { BotRecord, CallbackAnswer } from "../world/bot-record.js";
import type { SimCounters } from "../world/counters.js";
import type { SendBudget } from "../world/rate-limiter.js";
import type { ShownReplyKeyboard } from "../world/reply-keyboards.js";
import type { ChatRef, SimWorld, UserRef, WaitOptions } from "../world/sim-world.js";
import type { Transcript, TranscriptEvent } from "../world/transcript.js";
import { stopDraft } from "./draft-actions.js";
import { SimChats } from "./sim-chats.js";
import { type BotOption, SimUsers } from "./sim-users.js";
import {
  type SendMediaOptions,
  type SendTextOptions,
  UserActions,
  type UserFile,
} from "./user-actions.js";

/** A bot the simulator serves. */
export interface SimBotInfo {
  readonly id: number;
  /** The token to put in `/bot<token>/<method>`. */
  readonly token: string;
  /** What getMe answers. */
  readonly user: UserFromGetMe;
}

/** Options of {@link BotApiSim.waitForMessage}. */
export interface WaitForMessageOptions extends WaitOptions, BotOption {
  /**
   * Also consider messages the bot already sent with a `message_id` above this one (use the id
   * of the user message the bot is answering, so a fast reply is not missed). Without it only
   * messages sent after the call count.
   */
  readonly afterMessageId?: number;
}

/** Options of {@link BotApiSim.restartUpdateIds}. */
export interface RestartUpdateIdsOptions extends BotOption {
  /** The `update_id` of the next update. Integer 1–2147483647. */
  readonly nextId: number;
}

/** Options of {@link BotApiSim.close}. */
export interface CloseOptions {
  /** Real milliseconds to let in-flight requests finish before connections are cut. Range >= 0. @defaultValue 5000 */
  readonly timeoutMs?: number;
}

/** A bot's state in a {@link SimSnapshot}. */
export interface SimBotSnapshot {
  readonly id: number;
  readonly username: string;
  /** Updates waiting for getUpdates. */
  readonly pendingUpdates: number;
  /** Whether a getUpdates long poll is parked now. */
  readonly isPolling: boolean;
  /** The URL setWebhook stored, or "" when none. */
  readonly webhookUrl: string;
  /** Webhook POSTs waiting for the bot's answer now. */
  readonly webhookInFlight: number;
  /** The sticky allowed_updates, or undefined for Telegram's default set. */
  readonly allowedUpdates: readonly string[] | undefined;
}

/** The live state of the simulator; a fresh frozen object on every call. Holds no token. */
export interface SimSnapshot {
  readonly apiRoot: string;
  readonly isClosed: boolean;
  readonly bots: readonly SimBotSnapshot[];
  readonly users: number;
  readonly chats: number;
  readonly storedFiles: number;
  readonly storedFileBytes: number;
  readonly rateLimits: Readonly<RateLimitOptions> | false;
  readonly timeScale: number;
  readonly rangeRequests: boolean;
  /** Calls still covered by queued faults, per method. */
  readonly pendingFaults: Readonly<Record<string, number>>;
  readonly counters: SimCounters;
}

/** @internal What start() hands to the constructor. */
export interface SimParts {
  readonly world: SimWorld;
  readonly server: SimHttpServer;
  readonly faults: FaultInjector;
  readonly port: number;
  readonly options: ResolvedOptions;
}

function rootFor(host: string, port: number): string {
  return host.includes(":") ? `http://[${host}]:${port}` : `http://${host}:${port}`;
}

/**
 * A running Telegram Bot API simulator on loopback. Create it with {@link start}.
 *
 * @example
 * await using sim = await start();
 * const alice = sim.users.create({ firstName: "Alice" });
 * const chat = sim.chats.createPrivate(alice);
 * sim.sendCommand(alice, chat, "start");
 * // point a bot at sim.apiRoot with sim.token, then:
 * const reply = await sim.waitForMessage(chat);
 */
export class BotApiSim {
  /** Base URL of the Bot API, e.g. `http://127.0.0.1:8081`; requests go to `${apiRoot}/bot<token>/<method>`. */
  readonly apiRoot: string;
  /** Base URL of the HTTP control API, `${apiRoot}/_sim`. */
  readonly controlRoot: string;
  /** The chat page, `${apiRoot}/`: open it in a browser to be a user of the bot. */
  readonly pageUrl: string;
  readonly port: number;
  /** The first bot's token. */
  readonly token: string;
  /** Every bot's token, in the order of `options.bots`. */
  readonly tokens: readonly string[];
  readonly bots: readonly SimBotInfo[];
  /** The first bot as getMe describes it. */
  readonly bot: UserFromGetMe;
  /** Simulated users. */
  readonly users: SimUsers;
  /** Simulated chats. */
  readonly chats: SimChats;
  /** Fault injection. */
  readonly faults: FaultInjector;
  readonly #world: SimWorld;
  readonly #server: SimHttpServer;
  readonly #actions: UserActions;
  #closing: Promise<void> | undefined;

  /** @internal Use {@link start}. */
  constructor(parts: SimParts) {
    this.#world = parts.world;
    this.#server = parts.server;
    this.faults = parts.faults;
    this.port = parts.port;
    this.apiRoot = rootFor(parts.options.host, parts.port);
    this.controlRoot = `${this.apiRoot}${CONTROL_PREFIX}`;
    this.pageUrl = `${this.apiRoot}/`;
    this.bots = Object.freeze(
      parts.world.bots.map((bot) =>
        Object.freeze({ id: bot.id, token: bot.token, user: bot.user }),
      ),
    );
    this.tokens = Object.freeze(this.bots.map((bot) => bot.token));
    this.token = this.tokens[0] as string;
    this.bot = (this.bots[0] as SimBotInfo).user;
    this.users = new SimUsers(parts.world);
    this.chats = new SimChats(parts.world);
    this.#actions = new UserActions(parts.world);
  }

  /**
   * A user sends text into a chat. "/start" and other commands get their bot_command entity, as
   * in real clients. In groups, bots in privacy mode see only commands, mentions and replies.
   * Throws `ERR_UPDATE_QUEUE_FULL` when a receiving bot's queue is full (nothing is sent then).
   */
  sendText(user: UserRef, chat: ChatRef, text: string, options?: SendTextOptions): Message {
    return this.#actions.sendText(user, chat, text, options);
  }

  /** A user sends `/command` (plus `args`). */
  sendCommand(
    user: UserRef,
    chat: ChatRef,
    command: string,
    args?: string,
    options?: SendTextOptions,
  ): Message {
    return this.#actions.sendCommand(user, chat, command, args, options);
  }

  /** A user sends a document; the bot can getFile and download it (up to 20 MB, like Telegram). */
  sendDocument(user: UserRef, chat: ChatRef, file: UserFile, options?: SendMediaOptions): Message {
    return this.#actions.sendDocument(user, chat, file, options);
  }

  /** A user sends a photo (PNG, JPEG, GIF or WebP bytes). */
  sendPhoto(user: UserRef, chat: ChatRef, file: UserFile, options?: SendMediaOptions): Message {
    return this.#actions.sendPhoto(user, chat, file, options);
  }

  /** A user edits one of their text messages; the bots that saw it get `edited_message`. */
  editText(
    user: UserRef,
    chat: ChatRef,
    messageId: number,
    text: string,
    options?: SendTextOptions,
  ): Message {
    return this.#actions.editText(user, chat, messageId, text, options);
  }

  /**
   * A user presses Stop on the draft (sendMessageDraft with `can_stop`) shown in their private
   * chat; the bot gets a `stopped_message_generation` update, which is also returned. The draft
   * disappears, or stays without its button with `keep_on_stop`. Throws `ERR_INVALID_STATE` when
   * no draft is shown and `ERR_NO_SUCH_BUTTON` when it has no Stop button.
   * @example
   * const stopped = sim.stopDraft(alice, chat); // → { chat, draft_id }
   */
  stopDraft(user: UserRef, chat: ChatRef, options?: BotOption): MessageGenerationStopped {
    return stopDraft(this.#world, user, chat, options);
  }

  /**
   * A user presses an inline button; the bot that sent the message gets a `callback_query`.
   * Throws `ERR_NO_SUCH_BUTTON` unless the message has a button with exactly this data.
   */
  pressButton(
    user: UserRef,
    chat: ChatRef,
    messageId: number,
    callbackData: string,
    options?: BotOption,
  ): CallbackQuery {
    return this.#actions.pressButton(user, chat, messageId, callbackData, options);
  }

  /** The bot's answer to a callback query, or `undefined` while unanswered. */
  callbackAnswer(callbackQueryId: string, options: BotOption = {}): CallbackAnswer | undefined {
    checkOptions("options", options, ["bot"]);
    return this.#callbackQuery(callbackQueryId, options).answer;
  }

  /** Resolves with the bot's answer to a callback query (at once when it already answered). */
  waitForCallbackAnswer(
    callbackQueryId: string,
    options: WaitOptions & BotOption = {},
  ): Promise<CallbackAnswer> {
    checkOptions("options", options, ["bot", "timeoutMs", "signal"]);
    const query = this.#callbackQuery(callbackQueryId, options);
    if (query.answer !== undefined) return Promise.resolve(query.answer);
    return this.#world.waitFor(
      (resolve) => {
        query.waiters.push(resolve);
        return () => {
          const index = query.waiters.indexOf(resolve);
          if (index >= 0) query.waiters.splice(index, 1);
        };
      },
      options,
      `No answer to callback query ${callbackQueryId}`,
    );
  }

  /** A chat's messages as they now stand, and every send, edit, delete and chat action with its time. */
  transcript(chat: ChatRef, options: BotOption = {}): Transcript {
    checkOptions("options", options, ["bot"]);
    const record = this.#world.resolveChat(chat, options.bot);
    return Object.freeze({
      chat: record.chat(),
      messages: Object.freeze([...record.messages.values()].map((stored) => stored.message)),
      events: Object.freeze(record.log.toArray()),
      droppedEvents: record.log.dropped,
      forgottenMessages: record.forgottenMessages,
      draft: record.draft.current(this.#world.now()),
    });
  }

  /**
   * Resolves with the next message a bot sends into the chat that satisfies `predicate` (any
   * message when omitted). Rejects with `ERR_WAIT_TIMEOUT` after `timeoutMs`.
   * @example const reply = await sim.waitForMessage(chat, (m) => "text" in m, { afterMessageId: sent.message_id });
   */
  waitForMessage(
    chat: ChatRef,
    predicate?: (message: Message) => boolean,
    options: WaitForMessageOptions = {},
  ): Promise<Message> {
    checkOptions("options", options, ["bot", "timeoutMs", "signal", "afterMessageId"]);
    const record = this.#world.resolveChat(chat, options.bot);
    const botId = options.bot === undefined ? undefined : this.#world.resolveBot(options.bot).id;
    const matches = (message: Message): boolean => {
      try {
        return predicate === undefined || predicate(message);
      } catch {
        return false;
      }
    };
    if (options.afterMessageId !== undefined) {
      for (const stored of record.messages.values()) {
        if (
          stored.message.message_id > options.afterMessageId &&
          stored.senderBotId !== undefined &&
          (botId === undefined || stored.senderBotId === botId) &&
          matches(stored.message)
        ) {
          return Promise.resolve(stored.message);
        }
      }
    }
    return this.#world
      .waitForEvent(
        record,
        (event) =>
          event.kind === "send" &&
          event.actor === "bot" &&
          (botId === undefined || event.actorId === botId) &&
          event.message !== undefined &&
          matches(event.message),
        options,
      )
      .then((event) => event.message as Message);
  }

  /** Resolves with the next transcript event of the chat that satisfies `predicate`. */
  waitForEvent(
    chat: ChatRef,
    predicate: (event: TranscriptEvent) => boolean,
    options: WaitOptions & BotOption = {},
  ): Promise<TranscriptEvent> {
    checkOptions("options", options, ["bot", "timeoutMs", "signal"]);
    return this.#world.waitForEvent(this.#world.resolveChat(chat, options.bot), predicate, options);
  }

  /**
   * What Telegram's flood limits leave a bot for one chat now: the chat's bucket, a group's
   * sliding minute, the bot's overall bucket and (private chats) the draft bucket, in real time
   * with the time scale applied; false when the limits are off. The bot is the private chat's
   * own, else `options.bot` or the first bot.
   * @example
   * const budget = sim.sendBudget(chat);
   * if (budget !== false) console.log(`${Math.floor(budget.chat.available)} sends left now`);
   */
  sendBudget(chat: ChatRef, options: BotOption = {}): SendBudget | false {
    checkOptions("options", options, ["bot"]);
    const record = this.#world.resolveChat(chat, options.bot);
    const bot = this.#world.resolveBot(options.bot ?? record.botId);
    return bot.limiter.budget(record.key, record.isGroup, this.#world.now());
  }

  /**
   * The reply keyboard a user sees in a chat now: the latest ReplyKeyboardMarkup a bot sent
   * there (selective ones only to the users they were for), until a ReplyKeyboardRemove; else
   * `undefined`. Hiding a one-time keyboard after a press is the user's client's business.
   */
  replyKeyboard(
    user: UserRef,
    chat: ChatRef,
    options: BotOption = {},
  ): ShownReplyKeyboard | undefined {
    checkOptions("options", options, ["bot"]);
    const record = this.#world.resolveChat(chat, options.bot);
    return record.replyKeyboards.shownTo(this.#world.user(user).id);
  }

  /** Updates waiting for a bot's getUpdates. */
  pendingUpdates(options: BotOption = {}): number {
    checkOptions("options", options, ["bot"]);
    return this.#world.resolveBot(options.bot).queue.pending(this.#world.now());
  }

  /**
   * Makes a bot's update ids restart at `nextId`, as Telegram's do after a week without updates
   * (at random, often below the last id): the bot's confirmed offset then lies in the future, and
   * getUpdates falls back to the oldest pending update. Throws `ERR_INVALID_STATE` while updates
   * are pending (after such a week none are).
   * @example sim.restartUpdateIds({ nextId: 1 });
   */
  restartUpdateIds(options: RestartUpdateIdsOptions): void {
    const given = checkOptions("options", options, ["nextId", "bot"]);
    const nextId = checkNumber("nextId", given.nextId, {
      integer: true,
      min: 1,
      max: 2_147_483_647,
    });
    const bot = this.#world.resolveBot(given.bot as RestartUpdateIdsOptions["bot"]);
    bot.queue.restartIds(nextId, this.#world.now());
  }

  /** Monotonic counters: calls per method, responses per status, 429s (per chat), bytes. */
  counters(): SimCounters {
    return this.#world.counters.snapshot();
  }

  /** The flood limits in force (time scale not applied), or false when off. */
  get rateLimits(): Readonly<RateLimitOptions> | false {
    return (this.#world.bots[0] as BotRecord).limiter.limits;
  }

  /** The time scale of the flood limits. */
  get timeScale(): number {
    return this.#world.options.timeScale;
  }

  /** Replaces the flood limits of every bot (buckets start full); false turns them off. */
  setRateLimits(limits: Partial<RateLimitOptions> | false): void {
    const resolved = resolveRateLimits(limits, "limits");
    for (const bot of this.#world.bots) bot.limiter.setLimits(resolved);
  }

  /** Whether downloads honour Range (206); when off, Range is ignored and 200 sent. */
  get rangeRequests(): boolean {
    return this.#world.rangeRequests;
  }

  /** Switches Range support of downloads at runtime. */
  setRangeRequests(enabled: boolean): void {
    this.#world.rangeRequests = checkBoolean("enabled", enabled, this.#world.rangeRequests);
  }

  /** The live state (no tokens). */
  snapshot(): SimSnapshot {
    const world = this.#world;
    const now = world.now();
    return Object.freeze({
      apiRoot: this.apiRoot,
      isClosed: world.isClosed,
      bots: Object.freeze(
        world.bots.map((bot) =>
          Object.freeze({
            id: bot.id,
            username: bot.user.username,
            pendingUpdates: bot.queue.pending(now),
            isPolling: bot.longPoll.isParked,
            webhookUrl: bot.webhook?.url ?? "",
            webhookInFlight: bot.webhookDelivery.inFlight,
            allowedUpdates: bot.queue.allowedUpdates,
          }),
        ),
      ),
      users: world.userCount,
      chats: world.chatCount,
      storedFiles: world.files.count,
      storedFileBytes: world.files.storedBytes,
      rateLimits: this.rateLimits,
      timeScale: world.options.timeScale,
      rangeRequests: world.rangeRequests,
      pendingFaults: Object.freeze(this.faults.pending()),
      counters: world.counters.snapshot(),
    });
  }

  /**
   * Stops the simulator: waits end with `ERR_SIM_CLOSED`, parked long polls are answered, new
   * requests get 503, and connections still busy after `timeoutMs` are cut. Idempotent.
   */
  close(options: CloseOptions = {}): Promise<void> {
    checkOptions("options", options, ["timeoutMs"]);
    if (this.#closing !== undefined) return this.#closing;
    const timeoutMs = checkOptionalNumber("timeoutMs", options.timeoutMs, 5000, { min: 0 });
    this.#world.close();
    for (const bot of this.#world.bots) bot.longPoll.flush();
    this.#closing = this.#server.close(timeoutMs);
    return this.#closing;
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }

  #callbackQuery(id: string, options: BotOption) {
    const query = this.#world.resolveBot(options.bot).callbackQuery(id);
    if (query === undefined) {
      throw new BotApiSimError(
        "ERR_UNKNOWN_MESSAGE",
        `No callback query ${JSON.stringify(id)} for that bot`,
      );
    }
    return query;
  }
}
