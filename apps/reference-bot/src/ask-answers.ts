// /ask <question>: a long answer generated here, token by token like a language model's (seeded
// by the question), streamed with client.streamMessage — drafts with a Stop button in private
// chats, a progress message in groups. An answer runs inside its update, so the journal keeps the
// update unfinished until the answer is out and a crash replays it; Stop presses have a key of
// their own and reach it meanwhile.

import type { Update } from "@grammyjs/types";
import type { StreamOutcome, TelegramClient } from "@telepace/client";
import type { Clock } from "@telepace/core";
import type { Logger } from "pino";
import type { AnswerEnd, BotEventSink } from "./bot-events.js";

/** The first line of every answer, which the demo's crowd looks for. */
export const ANSWER_HEADER = "Answer to";
/** The last words of an answer that ran to its end. */
export const ANSWER_END = "— end of answer.";
/**
 * Shortest ms between an answer's draft frames: 5 a second. Telegram documents no draft limit and
 * a stream learns one from its first 429, but that 429 costs the chat a whole second of
 * `retry_after`; a bot that promises no 429 at all keeps under the 5 a second the sim enforces.
 */
const DRAFT_INTERVAL_MS = 200;

const WORDS = [
  "traffic",
  "control",
  "keeps",
  "every",
  "reply",
  "paced",
  "so",
  "the",
  "bot",
  "never",
  "earns",
  "a",
  "429",
  "while",
  "drafts",
  "grow",
  "in",
  "private",
  "chats",
  "and",
  "groups",
  "see",
  "one",
  "message",
  "edited",
  "until",
  "final",
  "text",
  "arrives",
  "whole",
] as const;

/** Options of {@link AskAnswers}. */
export interface AskAnswersOptions {
  readonly clock: Clock;
  readonly logger: Logger;
  /** Tokens the generator produces per second. @defaultValue 40 */
  readonly tokensPerSecond?: number | undefined;
  /** Receives `answer-started` and `answer-ended`. */
  readonly onEvent?: BotEventSink | undefined;
}

/** Counters for logs and the demo report. */
export interface AskCounters {
  asked: number;
  delivered: number;
  stopped: number;
  failed: number;
  /** Answers long enough to continue in a second message. */
  split: number;
}

/** A seeded word generator (FNV-1a of the question, then xorshift). */
function wordsFor(question: string): { count: number; next: () => string } {
  let state = 0x811c9dc5;
  for (let i = 0; i < question.length; i++) {
    state = Math.imul(state ^ question.charCodeAt(i), 0x01000193) >>> 0;
  }
  const random = () => {
    state ^= state << 13;
    state ^= state >>> 17;
    state ^= state << 5;
    state >>>= 0;
    return state / 4_294_967_296;
  };
  const count = 150 + Math.floor(random() * 550);
  return { count, next: () => WORDS[Math.floor(random() * WORDS.length)] as string };
}

/** Streams generated answers, one per /ask, each to its end, a Stop press or shutdown. */
export class AskAnswers {
  readonly counters: AskCounters = { asked: 0, delivered: 0, stopped: 0, failed: 0, split: 0 };
  readonly #client: TelegramClient;
  readonly #options: AskAnswersOptions;
  readonly #running = new Set<Promise<void>>();
  readonly #shutdown = new AbortController();

  constructor(client: TelegramClient, options: AskAnswersOptions) {
    this.#client = client;
    this.#options = options;
  }

  /** Answers still streaming. */
  get running(): number {
    return this.#running.size;
  }

  /** Streams an answer into the chat; resolves once it is delivered, stopped or failed. */
  start(chatId: number, isPrivate: boolean, question: string, replyTo: number): Promise<void> {
    this.counters.asked++;
    const onEvent = this.#options.onEvent ?? (() => {});
    onEvent({ type: "answer-started" });
    const answer = this.#answer(chatId, isPrivate, question, replyTo).then((ended) => {
      this.#running.delete(answer);
      onEvent({ type: "answer-ended", ...ended });
    });
    this.#running.add(answer);
    return answer;
  }

  /** Routes a Stop press to its answer; returns whether the update was one. */
  handleUpdate(update: Update): boolean {
    return this.#client.streams.handleUpdate(update);
  }

  /** Shutdown: every answer stops generating and sends what it has; waits for them. */
  async interruptAll(): Promise<void> {
    this.#shutdown.abort();
    await Promise.all([...this.#running]);
  }

  async #answer(
    chatId: number,
    isPrivate: boolean,
    question: string,
    replyTo: number,
  ): Promise<{ end: AnswerEnd; draftFrames: number; edits: number }> {
    const { clock, logger } = this.#options;
    const stepMs = 1000 / (this.#options.tokensPerSecond ?? 40);
    const shutdown = this.#shutdown.signal;
    const words = wordsFor(question);
    async function* generate(stop: AbortSignal): AsyncGenerator<string> {
      yield `${ANSWER_HEADER} “${question.slice(0, 200)}”:\n\n`;
      for (let i = 0; i < words.count && !stop.aborted && !shutdown.aborted; i++) {
        await clock.sleep(stepMs);
        yield `${words.next()}${i % 40 === 39 ? ".\n\n" : " "}`;
      }
      if (!stop.aborted && !shutdown.aborted) yield ANSWER_END;
    }
    let outcome: StreamOutcome;
    try {
      outcome = await this.#client.streamMessage(chatId, generate, {
        canStop: isPrivate,
        draftIntervalMs: DRAFT_INTERVAL_MS,
        params: { reply_parameters: { message_id: replyTo, allow_sending_without_reply: true } },
      }).result;
    } catch (error) {
      this.counters.failed++;
      logger.warn({ chatId, code: (error as { code?: unknown }).code }, "answer failed");
      return { end: "failed", draftFrames: 0, edits: 0 };
    }
    const shown = { draftFrames: outcome.draftFrames, edits: outcome.edits };
    if (outcome.status !== "delivered") {
      this.counters.failed++;
      logger.warn({ chatId, status: outcome.status }, "answer not delivered");
      return { end: "failed", ...shown };
    }
    this.counters.delivered++;
    if (outcome.stopped) this.counters.stopped++;
    if (outcome.messages.length > 1) this.counters.split++;
    return { end: outcome.stopped ? "stopped" : "delivered", ...shown };
  }
}
