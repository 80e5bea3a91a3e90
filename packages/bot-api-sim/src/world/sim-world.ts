// The simulated world shared by the Bot API handlers and the control API: bots, users, chats,
// files, the update plumbing, the transcript event stream and its waiters.

import type { Chat, Update, User, UserFromGetMe } from "@grammyjs/types";
import { abortReason, type LogLevel, onAbort, safeLog, type Timer } from "@telepace/core";
import { publish } from "../diagnostics.js";
import { BotApiSimError } from "../errors.js";
import type { ResolvedOptions } from "../options.js";
import { checkToken, generateToken, parseTokenBotId } from "../wire/token.js";
import { BotRecord } from "./bot-record.js";
import { type ChatKind, ChatRecord } from "./chat-record.js";
import { Counters } from "./counters.js";
import { FileStore } from "./file-store.js";
import type { TranscriptEvent } from "./transcript.js";
import type { UpdateType } from "./update-queue.js";
import type {
  WebhookAttempt,
  WebhookConnection,
  WebhookResponse,
  WebhookTarget,
} from "./webhook-delivery.js";
import { WorldEvents } from "./world-events.js";

/** A user given by object or id. */
export type UserRef = User | number;
/** A chat given by the object the control API returned, or by id. */
export type ChatRef = Chat | number;
/** A bot given by user id, username or token. */
export type BotRef = number | string;

/** Options of a wait on the transcript. */
export interface WaitOptions {
  /** Give up after this many ms of the simulator clock. Range >= 0. @defaultValue 10_000 */
  readonly timeoutMs?: number;
  /** Aborting rejects the wait with `signal.reason`. */
  readonly signal?: AbortSignal;
}

/** What the server layer lends the world for webhook delivery; start() passes it in. */
export interface WebhookTransport {
  /** Opens the HTTP client of a webhook setting. */
  readonly connect: (target: WebhookTarget) => WebhookConnection;
  /** Runs the method a webhook answered with, if it did (a webhook reply). */
  readonly reply: (world: SimWorld, bot: BotRecord, response: WebhookResponse) => void;
}

interface EventWaiter {
  readonly predicate: (event: TranscriptEvent) => boolean;
  readonly resolve: (event: TranscriptEvent) => void;
}

const DEFAULT_WAIT_MS = 10_000;
/** Waits that may be pending at once; each is a promise a test (or the control API) holds. */
const MAX_WAITS = 10_000;
const FIRST_USER_ID = 1_000_000_001;
const FIRST_BOT_ID = 7_000_000_001;

/** Everything the simulator knows. */
export class SimWorld {
  readonly options: ResolvedOptions;
  readonly counters = new Counters();
  /** Changes told to in-process observers (the chat page's event stream). */
  readonly events = new WorldEvents();
  readonly files: FileStore;
  readonly bots: readonly BotRecord[];
  rangeRequests: boolean;
  readonly #botsByToken = new Map<string, BotRecord>();
  readonly #botsById = new Map<number, BotRecord>();
  readonly #users = new Map<number, User>();
  readonly #chats = new Map<string, ChatRecord>();
  readonly #groups = new Map<number, ChatRecord>();
  readonly #chatObjects = new WeakMap<object, ChatRecord>();
  readonly #waiters = new Map<string, Set<EventWaiter>>();
  readonly #cancelWaits = new Set<(reason: unknown) => void>();
  #nextUserId = FIRST_USER_ID;
  #groupSequence = 0;
  #eventSequence = 0;
  #closed = false;

  constructor(options: ResolvedOptions, webhooks: WebhookTransport) {
    this.options = options;
    this.files = new FileStore(options.maxFileStorageBytes);
    this.rangeRequests = options.rangeRequests;
    const bots: BotRecord[] = [];
    options.bots.forEach((spec, index) => {
      const token =
        spec.token === undefined
          ? generateToken(FIRST_BOT_ID + index)
          : checkToken(`bots[${index}].token`, spec.token);
      const id = parseTokenBotId(token) as number;
      if (this.#botsById.has(id)) {
        throw new RangeError(
          `Expected \`bots[${index}].token\` to have a bot id no other bot uses, got ${id}`,
        );
      }
      const username =
        spec.username ?? (index === 0 ? "telepace_sim_bot" : `telepace_sim_bot_${index + 1}`);
      if (bots.some((bot) => bot.user.username.toLowerCase() === username.toLowerCase())) {
        throw new RangeError(
          `Expected \`bots[${index}].username\` to be unique, got ${JSON.stringify(username)}`,
        );
      }
      const user: UserFromGetMe = {
        id,
        is_bot: true,
        first_name: spec.firstName ?? "Telepace Sim Bot",
        username,
        can_join_groups: spec.canJoinGroups ?? true,
        can_read_all_group_messages: spec.canReadAllGroupMessages ?? false,
        supports_inline_queries: false,
        can_connect_to_business: false,
        has_main_web_app: false,
        has_topics_enabled: false,
        allows_users_to_create_topics: false,
        can_manage_bots: false,
        supports_join_request_queries: false,
      };
      const bot: BotRecord = new BotRecord({
        id,
        token,
        user: Object.freeze(user),
        clock: options.clock,
        firstUpdateId: 100_000_000 + Math.floor(options.random() * 800_000_000),
        maxPendingUpdates: options.maxPendingUpdates,
        updateRetentionMs: options.updateRetentionMs,
        rateLimits: options.rateLimits,
        timeScale: options.timeScale,
        onConflict: () => this.counters.add("conflicts"),
        webhookHooks: {
          clock: options.clock,
          timeScale: options.timeScale,
          unixNow: () => this.unixNow(),
          connect: webhooks.connect,
          reply: (response) => webhooks.reply(this, bot, response),
          report: (attempt) => this.#reportWebhook(id, attempt),
        },
      });
      bots.push(bot);
      this.#botsById.set(id, bot);
      this.#botsByToken.set(token, bot);
    });
    this.bots = bots;
  }

  get isClosed(): boolean {
    return this.#closed;
  }

  /** The simulator clock in ms. */
  now(): number {
    return this.options.clock.now();
  }

  /** Logs one line through the injected logger; a failing logger cannot fail the caller. */
  log(level: LogLevel, fields: Record<string, unknown>, message: string): void {
    safeLog(this.options.logger, level, fields, message);
  }

  /** Unix time in seconds for message dates. */
  unixNow(): number {
    return Math.floor((this.options.epochMs + this.options.clock.now()) / 1000);
  }

  /** Throws `ERR_SIM_CLOSED` once the simulator is closed. */
  assertOpen(): void {
    if (this.#closed) throw new BotApiSimError("ERR_SIM_CLOSED", "The simulator is closed");
  }

  // --- bots -----------------------------------------------------------------------------------

  botByToken(token: string): BotRecord | undefined {
    return this.#botsByToken.get(token);
  }

  botById(id: number): BotRecord | undefined {
    return this.#botsById.get(id);
  }

  /** A bot by id, username or token; the first bot when omitted. */
  resolveBot(ref: BotRef | undefined): BotRecord {
    if (ref === undefined) return this.bots[0] as BotRecord;
    const found =
      typeof ref === "number"
        ? this.#botsById.get(ref)
        : (this.#botsByToken.get(ref) ??
          this.bots.find(
            (bot) => bot.user.username.toLowerCase() === ref.replace(/^@/, "").toLowerCase(),
          ));
    if (found === undefined) {
      throw new BotApiSimError(
        "ERR_UNKNOWN_BOT",
        `No bot ${typeof ref === "number" ? `with id ${ref}` : "with that username or token"}`,
      );
    }
    return found;
  }

  // --- users ----------------------------------------------------------------------------------

  /** Creates a simulated user. */
  createUser(init: {
    readonly firstName?: string | undefined;
    readonly lastName?: string | undefined;
    readonly username?: string | undefined;
    readonly languageCode?: string | undefined;
    readonly isPremium?: boolean | undefined;
  }): User {
    this.assertOpen();
    if (this.#users.size >= this.options.maxUsers) {
      throw new BotApiSimError(
        "ERR_CAPACITY",
        `The simulator already has ${this.#users.size} users (maxUsers)`,
      );
    }
    let id = this.#nextUserId++;
    while (this.#botsById.has(id)) id = this.#nextUserId++;
    const user: User = {
      id,
      is_bot: false,
      first_name: init.firstName ?? `User ${id - FIRST_USER_ID + 1}`,
    };
    if (init.lastName !== undefined) user.last_name = init.lastName;
    if (init.username !== undefined) user.username = init.username;
    user.language_code = init.languageCode ?? "en";
    if (init.isPremium === true) user.is_premium = true;
    const frozen = Object.freeze(user);
    this.#users.set(id, frozen);
    this.events.emit({ type: "user", user: frozen });
    return frozen;
  }

  /** A user by object or id; throws `ERR_UNKNOWN_USER`. */
  user(ref: UserRef): User {
    const id = typeof ref === "number" ? ref : ref?.id;
    const user = typeof id === "number" ? this.#users.get(id) : undefined;
    if (user === undefined) {
      throw new BotApiSimError("ERR_UNKNOWN_USER", `No simulated user with id ${String(id)}`);
    }
    return user;
  }

  userById(id: number): User | undefined {
    return this.#users.get(id);
  }

  get userCount(): number {
    return this.#users.size;
  }

  /** Every user, oldest first. */
  users(): IterableIterator<User> {
    return this.#users.values();
  }

  // --- chats ----------------------------------------------------------------------------------

  get chatCount(): number {
    return this.#chats.size;
  }

  /** Every chat (private chats of every bot, groups, supergroups), oldest first. */
  chats(): IterableIterator<ChatRecord> {
    return this.#chats.values();
  }

  #checkChatCapacity(): void {
    if (this.#chats.size >= this.options.maxChats) {
      throw new BotApiSimError(
        "ERR_CAPACITY",
        `The simulator already has ${this.#chats.size} chats (maxChats)`,
      );
    }
  }

  #chatInstance(): string {
    return String(-Math.floor(this.options.random() * 9e17) - 1e17);
  }

  /** The private chat of a user with a bot, created on demand when `create` is set. */
  privateChat(
    bot: BotRecord,
    user: User,
    create: { started: boolean } | undefined,
  ): ChatRecord | undefined {
    let record = bot.privateChats.get(user.id);
    if (record === undefined && create !== undefined) {
      this.#checkChatCapacity();
      record = new ChatRecord({
        key: `p:${bot.id}:${user.id}`,
        id: user.id,
        kind: "private",
        user,
        botId: bot.id,
        started: create.started,
        maxTranscriptEvents: this.options.maxTranscriptEvents,
        chatInstance: this.#chatInstance(),
        createdAfterSeq: this.#eventSequence,
      });
      bot.privateChats.set(user.id, record);
      this.#chats.set(record.key, record);
      this.events.emit({ type: "chat", chat: record });
    }
    return record;
  }

  /** A new group or supergroup with no members yet. */
  createGroupRecord(kind: Exclude<ChatKind, "private">, title: string): ChatRecord {
    this.#checkChatCapacity();
    const sequence = ++this.#groupSequence;
    const id =
      kind === "group"
        ? -(4_000_000_000 + sequence)
        : -(1_000_000_000_000 + 2_000_000_000 + sequence);
    const record = new ChatRecord({
      key: `g:${id}`,
      id,
      kind,
      title,
      maxTranscriptEvents: this.options.maxTranscriptEvents,
      chatInstance: this.#chatInstance(),
      createdAfterSeq: this.#eventSequence,
    });
    this.#chats.set(record.key, record);
    this.#groups.set(id, record);
    this.events.emit({ type: "chat", chat: record });
    return record;
  }

  /** A group or supergroup by id. */
  group(id: number): ChatRecord | undefined {
    return this.#groups.get(id);
  }

  /** The Chat object handed to the control API user, remembered so it can be passed back. */
  chatObject(record: ChatRecord): Chat {
    const chat = Object.freeze(record.chat());
    this.#chatObjects.set(chat, record);
    return chat;
  }

  /**
   * Resolves a chat reference of the control API. A bare id of a private chat is ambiguous when
   * the user talks to several bots: pass the object the control API returned, or `bot`.
   */
  resolveChat(ref: ChatRef, bot?: BotRef): ChatRecord {
    if (typeof ref === "object" && ref !== null) {
      const known = this.#chatObjects.get(ref);
      if (known !== undefined) return known;
      return this.resolveChat(ref.id, bot);
    }
    if (typeof ref !== "number" || !Number.isSafeInteger(ref)) {
      throw new BotApiSimError(
        "ERR_UNKNOWN_CHAT",
        `Expected a chat object or id, got ${String(ref)}`,
      );
    }
    const group = this.#groups.get(ref);
    if (group !== undefined) return group;
    const candidates =
      bot === undefined
        ? this.bots
            .map((candidate) => candidate.privateChats.get(ref))
            .filter((chat) => chat !== undefined)
        : [this.resolveBot(bot).privateChats.get(ref)].filter((chat) => chat !== undefined);
    if (candidates.length === 1) return candidates[0] as ChatRecord;
    if (candidates.length > 1) {
      throw new BotApiSimError(
        "ERR_AMBIGUOUS_CHAT",
        `User ${ref} has private chats with ${candidates.length} bots; pass the chat object or the bot`,
      );
    }
    throw new BotApiSimError("ERR_UNKNOWN_CHAT", `No simulated chat with id ${ref}`);
  }

  // --- updates --------------------------------------------------------------------------------

  /** Throws `ERR_UPDATE_QUEUE_FULL` when `count` updates of `type` would not fit for some target. */
  ensureRoom(targets: readonly BotRecord[], type: UpdateType, count = 1): void {
    const now = this.now();
    for (const bot of targets) {
      if (bot.queue.accepts(type) && !bot.queue.hasRoom(now, count)) {
        throw new BotApiSimError(
          "ERR_UPDATE_QUEUE_FULL",
          `Bot ${bot.id} has ${bot.queue.size} unconfirmed updates (maxPendingUpdates); it must call getUpdates first`,
        );
      }
    }
  }

  /**
   * Queues one update per target bot, all or nothing: when any target's queue is full, nothing
   * is queued and `ERR_UPDATE_QUEUE_FULL` is thrown.
   */
  deliver<K extends UpdateType>(
    targets: readonly BotRecord[],
    type: K,
    payload: (bot: BotRecord) => NonNullable<Update[K]>,
  ): void {
    this.ensureRoom(targets, type);
    const now = this.now();
    for (const bot of targets) {
      const update = bot.queue.push(type, payload(bot), now);
      if (update === undefined) {
        this.counters.add("updatesFiltered");
        continue;
      }
      this.counters.add("updatesQueued");
      publish("update", () => ({
        type: "update",
        botId: bot.id,
        updateId: update.update_id,
        updateType: type,
      }));
      bot.longPoll.notify();
      bot.webhookDelivery.notify();
    }
  }

  #reportWebhook(botId: number, attempt: WebhookAttempt): void {
    this.counters.add("webhookRequests");
    if (attempt.outcome === "confirmed") this.counters.add("webhookConfirmed");
    else this.counters.add("webhookFailures");
    if (attempt.outcome === "dropped") this.counters.add("webhookDropped");
    const fields = { botId, ...attempt };
    publish("webhook", () => ({ type: "webhook", ...fields }));
    this.log(attempt.outcome === "confirmed" ? "debug" : "info", fields, "bot-api-sim: webhook");
  }

  // --- transcript -----------------------------------------------------------------------------

  /** Appends an event to a chat's transcript and wakes the waiters it satisfies. */
  record(
    chat: ChatRecord,
    event: Omit<TranscriptEvent, "seq" | "atMs" | "date" | "chatId">,
  ): TranscriptEvent {
    const full: TranscriptEvent = Object.freeze({
      seq: ++this.#eventSequence,
      atMs: this.now(),
      date: this.unixNow(),
      chatId: chat.id,
      ...event,
    });
    if (chat.log.append(full)) this.counters.add("transcriptEventsDropped");
    const waiters = this.#waiters.get(chat.key);
    if (waiters !== undefined) {
      for (const waiter of [...waiters]) {
        if (waiter.predicate(full)) waiter.resolve(full);
      }
    }
    this.events.emit({ type: "transcript", chat, event: full });
    return full;
  }

  /** Resolves with the first future event of `chat` that satisfies `predicate`. */
  waitForEvent(
    chat: ChatRecord,
    predicate: (event: TranscriptEvent) => boolean,
    options: WaitOptions = {},
  ): Promise<TranscriptEvent> {
    return this.waitFor(
      (resolve) => {
        let waiters = this.#waiters.get(chat.key);
        if (waiters === undefined) {
          waiters = new Set();
          this.#waiters.set(chat.key, waiters);
        }
        const waiter: EventWaiter = {
          predicate: (event) => {
            try {
              return predicate(event);
            } catch {
              return false;
            }
          },
          resolve,
        };
        const set = waiters;
        set.add(waiter);
        return () => {
          set.delete(waiter);
          if (set.size === 0 && this.#waiters.get(chat.key) === set) this.#waiters.delete(chat.key);
        };
      },
      options,
      `No matching event in chat ${chat.id}`,
    );
  }

  /**
   * The shared shape of every wait: `subscribe` registers the resolver and returns its
   * unsubscribe; timeout, abort and close all end the wait and unsubscribe.
   */
  waitFor<T>(
    subscribe: (resolve: (value: T) => void) => () => void,
    options: WaitOptions,
    timeoutText: string,
  ): Promise<T> {
    this.assertOpen();
    if (this.#cancelWaits.size >= MAX_WAITS) {
      throw new BotApiSimError("ERR_CAPACITY", `${MAX_WAITS} waits are pending already`);
    }
    const timeoutMs = options.timeoutMs ?? DEFAULT_WAIT_MS;
    if (typeof timeoutMs !== "number" || !(timeoutMs >= 0)) {
      throw new RangeError(
        `Expected \`timeoutMs\` to be a finite number >= 0, got ${String(timeoutMs)}`,
      );
    }
    const signal = options.signal;
    if (signal?.aborted) return Promise.reject(abortReason(signal));
    return new Promise<T>((resolve, reject) => {
      let timer: Timer | undefined;
      let unsubscribeAbort = (): void => {};
      let unsubscribe = (): void => {};
      const cancel = (reason: unknown): void => {
        finish();
        reject(reason);
      };
      const finish = (): void => {
        timer?.cancel();
        unsubscribeAbort();
        unsubscribe();
        this.#cancelWaits.delete(cancel);
      };
      this.#cancelWaits.add(cancel);
      unsubscribe = subscribe((value) => {
        finish();
        resolve(value);
      });
      timer = this.options.clock.setTimer(
        () =>
          cancel(new BotApiSimError("ERR_WAIT_TIMEOUT", `${timeoutText} within ${timeoutMs} ms`)),
        timeoutMs,
      );
      unsubscribeAbort = onAbort(signal, () => cancel(abortReason(signal as AbortSignal)));
    });
  }

  /** Ends every wait with `ERR_SIM_CLOSED` and refuses new ones. */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    for (const bot of this.bots) bot.webhookDelivery.stop();
    const error = new BotApiSimError("ERR_SIM_CLOSED", "The simulator was closed");
    for (const cancel of [...this.#cancelWaits]) cancel(error);
    this.events.emit({ type: "closed" });
  }
}
