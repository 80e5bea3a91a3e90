// One simulated bot: its identity, its update queue and long-poll slot, its flood limits, its
// webhook settings and delivery, and its callback queries.

import type { BotCommand, User, UserFromGetMe } from "@grammyjs/types";
import type { Clock } from "@telepace/core";
import type { RateLimitOptions } from "../options.js";
import type { ChatRecord } from "./chat-record.js";
import { LongPoll } from "./long-poll.js";
import { RateLimiter } from "./rate-limiter.js";
import { UpdateQueue } from "./update-queue.js";
import { WebhookDelivery, type WebhookHooks } from "./webhook-delivery.js";

/** Webhook settings kept by setWebhook. */
interface WebhookState {
  readonly url: string;
  readonly maxConnections: number;
  readonly ipAddress: string | undefined;
  readonly secretToken: string | undefined;
}

/** A callback query and the bot's answer to it. */
interface CallbackQueryState {
  readonly id: string;
  readonly chatKey: string;
  answer: CallbackAnswer | undefined;
  readonly waiters: Array<(answer: CallbackAnswer) => void>;
}

/** What a bot answered to a button press (answerCallbackQuery). */
export interface CallbackAnswer {
  readonly text: string | undefined;
  readonly showAlert: boolean;
  readonly url: string | undefined;
  readonly cacheTime: number;
  /** The simulator clock when the answer arrived, in ms. */
  readonly atMs: number;
}

/** Callback queries remembered per bot; older ones are forgotten (and can no longer be answered). */
const MAX_CALLBACK_QUERIES = 10_000;

/** A simulated bot. */
export class BotRecord {
  readonly id: number;
  readonly token: string;
  readonly user: UserFromGetMe;
  readonly queue: UpdateQueue;
  readonly longPoll: LongPoll;
  readonly limiter: RateLimiter;
  webhook: WebhookState | undefined;
  /** Posts updates to the webhook while one is set and reachable (loopback). */
  readonly webhookDelivery: WebhookDelivery;
  /** The real server allows one setWebhook with a URL per second. */
  nextSetWebhookAtMs = Number.NEGATIVE_INFINITY;
  /** The previous getUpdates call, for the server's anti-busy-loop rules. */
  lastGetUpdates: { readonly offset: number; readonly atMs: number } | undefined;
  commands: readonly BotCommand[] = [];
  readonly privateChats = new Map<number, ChatRecord>();
  readonly #callbackQueries = new Map<string, CallbackQueryState>();

  constructor(init: {
    readonly id: number;
    readonly token: string;
    readonly user: UserFromGetMe;
    readonly clock: Clock;
    readonly firstUpdateId: number;
    readonly maxPendingUpdates: number;
    readonly updateRetentionMs: number;
    readonly rateLimits: Readonly<RateLimitOptions> | false;
    readonly timeScale: number;
    readonly onConflict: () => void;
    readonly webhookHooks: WebhookHooks;
  }) {
    this.id = init.id;
    this.token = init.token;
    this.user = init.user;
    this.queue = new UpdateQueue(
      init.firstUpdateId,
      init.maxPendingUpdates,
      init.updateRetentionMs,
    );
    this.longPoll = new LongPoll(init.clock, this.queue, init.onConflict);
    this.limiter = new RateLimiter(init.rateLimits, init.timeScale);
    this.webhookDelivery = new WebhookDelivery(this.queue, init.webhookHooks);
  }

  /** Remembers a new callback query. */
  addCallbackQuery(id: string, chatKey: string): CallbackQueryState {
    const state: CallbackQueryState = { id, chatKey, answer: undefined, waiters: [] };
    this.#callbackQueries.set(id, state);
    if (this.#callbackQueries.size > MAX_CALLBACK_QUERIES) {
      const oldest = this.#callbackQueries.keys().next().value as string;
      this.#callbackQueries.delete(oldest);
    }
    return state;
  }

  callbackQuery(id: string): CallbackQueryState | undefined {
    return this.#callbackQueries.get(id);
  }
}

/** The bot as it appears in `Message.from` and in member lists. */
export function botAsUser(bot: BotRecord): User {
  return { id: bot.id, is_bot: true, first_name: bot.user.first_name, username: bot.user.username };
}
