// The options of a streamed message and of the registry that opens streams: each checked whole,
// with the defaults in one frozen object.

import type { ParseMode } from "@grammyjs/types";
import {
  type Clock,
  checkBoolean,
  checkClock,
  checkMethods,
  checkObject,
  checkOptionalNumber,
  checkOptions,
  checkSignal,
  describeValue,
  systemClock,
} from "@telepace/core";
import type { TelegramOutbox } from "../outbox.js";
import { MESSAGE_TEXT_LIMIT } from "./split-text.js";

/**
 * Performs one attempt of a Bot API method the stream uses, resolving with its result or throwing
 * what the outbox understands (a `RetryAfterError`, `TelegramApiError`, `NetworkError`, …).
 */
export type StreamTransport = (
  method: StreamMethod,
  params: Record<string, unknown>,
  signal: AbortSignal,
) => Promise<unknown>;

/** The methods a stream calls. */
export type StreamMethod = "sendMessageDraft" | "sendMessage" | "editMessageText" | "deleteMessage";

/** The defaults of {@link StreamMessageOptions}. */
export const streamDefaults = Object.freeze({
  /**
   * The floor of one stream's draft frames: one per this many ms on average, two at most in a
   * row. A stream sends its next frame as soon as the previous one is answered, but no more than
   * 30 a second — the bot's documented message rate — even when Telegram answers in a
   * millisecond; a frame answered a little sooner than the floor goes at once after a slower one.
   * Telegram documents no draft limit; a 429 teaches the stream (and the chat's later streams) a
   * slower pace, which streams into chats that taught none yet start from too.
   */
  draftIntervalMs: 34,
  /** A pace a 429 taught holds this long after it, then halves once per this long. */
  learnedDraftPaceHoldMs: 60_000,
  /** The slowest pace a 429 can teach: one draft per this many ms. */
  maxLearnedDraftSpacingMs: 10_000,
  /** After a failed draft the next waits this long, doubling per failure in a row. */
  draftFailureBackoffMs: 500,
  /** The longest wait after failed drafts. */
  maxDraftFailureBackoffMs: 8_000,
  /** Chats whose learned draft pace the registry remembers (oldest forgotten first). */
  maxPacedChats: 10_000,
  /**
   * Progress edits of a stream in a group: one of its requests per `editIntervalMs`, 17 a minute
   * spread evenly over the stream — the 17 of a group's 20 a minute the outbox lets edits take, so
   * its window never holds the stream back.
   */
  groupEditIntervalMs: 3_600,
  /** The same in a private chat that refuses drafts (Telegram's one message a second). */
  privateEditIntervalMs: 1_000,
  /**
   * Requests a stream may make in a row before its progress edits are spread out. 1: a burst
   * early is paid back by a gap of seconds later (4 left the text 11 s stale in a group).
   */
  editBurst: 1,
  /** A draft is a 30 s preview: a producer quiet for this long gets the same frame again. */
  draftRefreshMs: 20_000,
  /** Most UTF-16 units per message before the text continues in the next one. */
  maxTextLength: MESSAGE_TEXT_LIMIT,
  /** Chats whose refusal of drafts the registry remembers (oldest forgotten first). */
  maxRefusedChats: 10_000,
});

/** Options of one streamed message. */
export interface StreamMessageOptions {
  /** `parse_mode` of every frame and message; the text is split where its markup allows. */
  readonly parseMode?: ParseMode | undefined;
  /**
   * Extra `sendMessage` parameters for the messages (`reply_parameters`, `reply_markup`,
   * `link_preview_options`, `message_thread_id`, …); `message_thread_id` also goes with drafts.
   */
  readonly params?: Readonly<Record<string, unknown>> | undefined;
  /**
   * Stream into a private chat as `sendMessageDraft` frames. false: a progress message with
   * coalesced edits, as in groups. @defaultValue true
   */
  readonly drafts?: boolean | undefined;
  /**
   * Show the person a Stop button on the draft (Bot API 10.3): route `stopped_message_generation`
   * updates to {@link StreamRegistry.handleUpdate} and the stream's `signal` aborts.
   * @defaultValue false
   */
  readonly canStop?: boolean | undefined;
  /** Keep the draft shown after Stop until the final message replaces it. @defaultValue true */
  readonly keepOnStop?: boolean | undefined;
  /** Show "Thinking…" (an empty draft) before the first text arrives. @defaultValue true */
  readonly thinking?: boolean | undefined;
  /**
   * Edit mode: the final goes into the progress message (one edit, nothing left to delete). false:
   * the final is a new message, which notifies the chat, and the progress message is deleted
   * once it arrived. Either way a final that cannot be edited in is sent. @defaultValue true
   */
  readonly finishInPlace?: boolean | undefined;
  /**
   * Ms per draft frame the stream keeps at least on average (two may go back to back). A stream
   * sends its next frame as soon as the previous one is answered, within this; after a 429 it
   * spaces every frame by the pace the chat took. Range: >= 0. @defaultValue 34 (30 a second)
   */
  readonly draftIntervalMs?: number | undefined;
  /**
   * Long-run ms between a stream's progress edits (edit mode): its requests to the chat draw on a
   * bucket of `editBurst` that refills one per `editIntervalMs`. Every request of the progress
   * message waits for it (its edits, the next part's send, a part's last edit); the final draws
   * on it without waiting.
   * Range: >= 0. @defaultValue 3600 in groups, 1000 in private chats
   */
  readonly editIntervalMs?: number | undefined;
  /** Requests in a row before progress edits are spread out. Range: integer >= 1. @defaultValue 1 */
  readonly editBurst?: number | undefined;
  /** Ms after which an unchanged draft is sent again. Range: >= 1000. @defaultValue 20000 */
  readonly draftRefreshMs?: number | undefined;
  /** Most UTF-16 units per message. Range: integer 16..4096. @defaultValue 4096 */
  readonly maxTextLength?: number | undefined;
  /** Aborting stops the stream: nothing more is sent, and `result` rejects with the reason. */
  readonly signal?: AbortSignal | undefined;
}

/** Options of {@link StreamRegistry}. */
export interface StreamRegistryOptions {
  /** The outbox every frame, edit and message goes through. */
  readonly outbox: TelegramOutbox;
  /** Performs one attempt of a method (the client passes its HTTP call). */
  readonly transport: StreamTransport;
  /** Time for draft pacing. Use the outbox's clock. @defaultValue systemClock */
  readonly clock?: Clock | undefined;
  /** Defaults for every stream the registry opens. */
  readonly defaults?: Omit<StreamMessageOptions, "signal" | "params"> | undefined;
}

/** {@link StreamMessageOptions} checked, defaults applied. */
export interface ResolvedStreamOptions {
  readonly parseMode: ParseMode | undefined;
  readonly params: Readonly<Record<string, unknown>>;
  readonly drafts: boolean;
  readonly canStop: boolean;
  readonly keepOnStop: boolean;
  readonly thinking: boolean;
  readonly finishInPlace: boolean;
  readonly draftIntervalMs: number;
  readonly draftRefreshMs: number;
  /** `undefined`: the chat's default. */
  readonly editIntervalMs: number | undefined;
  readonly editBurst: number;
  readonly maxTextLength: number;
  readonly signal: AbortSignal | undefined;
}

const STREAM_KEYS = [
  "parseMode",
  "params",
  "drafts",
  "canStop",
  "keepOnStop",
  "thinking",
  "finishInPlace",
  "draftIntervalMs",
  "draftRefreshMs",
  "editIntervalMs",
  "editBurst",
  "maxTextLength",
  "signal",
] as const satisfies readonly (keyof StreamMessageOptions)[];

const PARSE_MODES: readonly string[] = ["HTML", "MarkdownV2", "Markdown"];

/**
 * Checks a stream's options whole over the registry's defaults.
 * @throws {TypeError|RangeError} naming the option.
 */
export function resolveStreamOptions(
  options: unknown,
  defaults: Partial<ResolvedStreamOptions> = {},
): ResolvedStreamOptions {
  const given = { ...defaults, ...checkOptions("options", options, STREAM_KEYS) };
  const parseMode = given.parseMode;
  if (parseMode !== undefined && !PARSE_MODES.includes(parseMode as string)) {
    throw new TypeError(
      `Expected \`parseMode\` to be "HTML", "MarkdownV2" or "Markdown", got ${describeValue(parseMode)}`,
    );
  }
  const params = given.params === undefined ? {} : checkObject("params", given.params);
  for (const key of ["chat_id", "text", "parse_mode"]) {
    if (key in params) {
      throw new TypeError(`Unknown option \`${key}\` in \`params\` (the stream sets it)`);
    }
  }
  return {
    parseMode: parseMode as ParseMode | undefined,
    params,
    drafts: checkBoolean("drafts", given.drafts, true),
    canStop: checkBoolean("canStop", given.canStop, false),
    keepOnStop: checkBoolean("keepOnStop", given.keepOnStop, true),
    thinking: checkBoolean("thinking", given.thinking, true),
    finishInPlace: checkBoolean("finishInPlace", given.finishInPlace, true),
    draftIntervalMs: checkOptionalNumber(
      "draftIntervalMs",
      given.draftIntervalMs,
      streamDefaults.draftIntervalMs,
      { min: 0 },
    ),
    draftRefreshMs: checkOptionalNumber(
      "draftRefreshMs",
      given.draftRefreshMs,
      streamDefaults.draftRefreshMs,
      { min: 1000 },
    ),
    editIntervalMs:
      given.editIntervalMs === undefined
        ? undefined
        : checkOptionalNumber("editIntervalMs", given.editIntervalMs, 0, { min: 0 }),
    editBurst: checkOptionalNumber("editBurst", given.editBurst, streamDefaults.editBurst, {
      integer: true,
      min: 1,
    }),
    maxTextLength: checkOptionalNumber(
      "maxTextLength",
      given.maxTextLength,
      streamDefaults.maxTextLength,
      { integer: true, min: 16, max: MESSAGE_TEXT_LIMIT },
    ),
    signal: checkSignal("signal", given.signal),
  };
}

/** {@link StreamRegistryOptions} checked. */
export interface ResolvedRegistryOptions {
  readonly outbox: TelegramOutbox;
  readonly transport: StreamTransport;
  readonly clock: Clock;
  readonly defaults: Partial<ResolvedStreamOptions>;
}

/**
 * Checks the registry's options whole.
 * @throws {TypeError|RangeError} naming the option.
 */
export function resolveRegistryOptions(options: unknown): ResolvedRegistryOptions {
  const given = checkOptions("options", checkObject("options", options), [
    "outbox",
    "transport",
    "clock",
    "defaults",
  ]);
  const outbox = checkMethods<TelegramOutbox>("outbox", given.outbox, ["enqueue"]);
  if (outbox === undefined) throw new TypeError("Expected `outbox` to be a TelegramOutbox");
  if (typeof given.transport !== "function") {
    throw new TypeError(
      `Expected \`transport\` to be a function, got ${describeValue(given.transport)}`,
    );
  }
  const defaults = given.defaults === undefined ? {} : checkObject("defaults", given.defaults);
  if ("signal" in defaults || "params" in defaults) {
    throw new TypeError("Unknown option `signal`/`params` in `defaults` (they are per stream)");
  }
  // Checked now, so a bad default fails at construction rather than at the first stream.
  resolveStreamOptions(defaults);
  return {
    outbox,
    transport: given.transport as StreamTransport,
    clock: checkClock(given.clock, systemClock),
    defaults: defaults as Partial<ResolvedStreamOptions>,
  };
}
