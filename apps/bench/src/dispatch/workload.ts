// The synthetic update stream of the dispatch comparison: message updates over many principals,
// Zipf-skewed, with arrival times and simulated I/O, generated once for every contender.

import type { Message, Update } from "@grammyjs/types";
import { randomInt, seededRandom, zipfSampler } from "../random.js";

/** Parameters of {@link makeUpdateStream}. */
export interface StreamOptions {
  /** Updates in the stream. */
  readonly count: number;
  /** Distinct principals (a private chat, or one user in one group). */
  readonly principals: number;
  /** Zipf exponent of how updates spread over principals; 0 is uniform. */
  readonly skew: number;
  /** Share of principals that are users in groups (the rest are private chats), 0..1. */
  readonly groupShare: number;
  /** Groups the group principals are spread over. */
  readonly groups: number;
  /** Arrival rate in updates per second; `Infinity` makes every update available at once. */
  readonly arrivalsPerSecond: number;
  /** Simulated I/O per update, ms, drawn uniformly from [min, max]; 0..0 means no I/O. */
  readonly ioMs: readonly [min: number, max: number];
  readonly seed: number;
  /**
   * Share of the updates sent by one hot principal (principal 0, a private chat), 0..1; the rest
   * spread over the other principals as `skew` says. @defaultValue none (no hot principal)
   */
  readonly hotShare?: number;
}

/** The principal index of the hot principal of a stream with `hotShare`. */
export const HOT_PRINCIPAL = 0;

/** A stream ready to replay. Arrays are indexed by position in the stream (update_id − 1). */
export interface UpdateStream {
  readonly updates: readonly Update[];
  /** When each update becomes available, ms after the start of the replay. */
  readonly arrivalMs: Float64Array;
  /** The simulated I/O of each update, whole ms. */
  readonly ioMs: Uint16Array;
  /** The principal index of each update (for ordering checks). */
  readonly principalOf: Uint32Array;
  readonly options: StreamOptions;
}

const FIRST_USER_ID = 100_000;
const FIRST_GROUP_ID = -1_001_000_000_000;

/** Builds the stream; the same options always give the same stream. */
export function makeUpdateStream(options: StreamOptions): UpdateStream {
  const random = seededRandom(options.seed);
  const pickPrincipal = zipfSampler(options.principals, options.skew, random);
  // Ranks are shuffled onto principals so the busiest principal is not always principal 0.
  const rankToPrincipal = Array.from({ length: options.principals }, (_, index) => index);
  for (let index = rankToPrincipal.length - 1; index > 0; index--) {
    const other = randomInt(random, 0, index);
    [rankToPrincipal[index], rankToPrincipal[other]] = [
      rankToPrincipal[other] as number,
      rankToPrincipal[index] as number,
    ];
  }
  const hotShare = options.hotShare;
  // The hot principal stays a private chat: group principals are the highest indices then.
  const groupPrincipals = Math.round(options.principals * options.groupShare);
  const isGroupPrincipal = (principal: number): boolean =>
    hotShare === undefined
      ? principal < groupPrincipals
      : principal >= options.principals - groupPrincipals;
  const pickOther =
    hotShare === undefined ? undefined : zipfSampler(options.principals - 1, options.skew, random);
  const updates: Update[] = [];
  const arrivalMs = new Float64Array(options.count);
  const ioMs = new Uint16Array(options.count);
  const principalOf = new Uint32Array(options.count);
  const date = 1_767_225_600; // a fixed date keeps the stream identical between runs
  for (let index = 0; index < options.count; index++) {
    const principal =
      hotShare === undefined || pickOther === undefined
        ? (rankToPrincipal[pickPrincipal()] as number)
        : random() < hotShare
          ? HOT_PRINCIPAL
          : 1 + pickOther();
    principalOf[index] = principal;
    arrivalMs[index] = Number.isFinite(options.arrivalsPerSecond)
      ? (index * 1000) / options.arrivalsPerSecond
      : 0;
    ioMs[index] = randomInt(random, options.ioMs[0], options.ioMs[1]);
    const userId = FIRST_USER_ID + principal;
    const from = { id: userId, is_bot: false, first_name: `User ${principal}` };
    const isGroup = isGroupPrincipal(principal);
    const message = (
      isGroup
        ? {
            message_id: index + 1,
            date,
            chat: {
              id: FIRST_GROUP_ID - (principal % options.groups),
              type: "supergroup",
              title: `Group ${principal % options.groups}`,
            },
            from,
            text: `message ${index + 1}`,
          }
        : {
            message_id: index + 1,
            date,
            chat: { id: userId, type: "private", first_name: from.first_name },
            from,
            text: `message ${index + 1}`,
          }
    ) as Update["message"] & Message.TextMessage;
    updates.push({ update_id: index + 1, message });
  }
  return { updates, arrivalMs, ioMs, principalOf, options };
}

/**
 * The principal key a bot author writes for grammY runner's `sequentialize`, giving the same
 * ordering as UpdateDispatcher's seed keys for these updates: the user in a private chat, the
 * (chat, user) pair in a group.
 */
export function principalConstraint(update: Update): string | undefined {
  const message = update.message;
  if (message?.from === undefined) return undefined;
  return message.chat.type === "private"
    ? `private:${message.from.id}`
    : `group:${message.chat.id}:${message.from.id}`;
}
