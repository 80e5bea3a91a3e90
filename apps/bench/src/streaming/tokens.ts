// The streaming workload's producer: a seeded stream of word tokens like a language model's, one
// word each, so the analysis can count how many tokens were on screen when.

import { randomInt, seededRandom } from "../random.js";

const VOCABULARY = [
  "the",
  "model",
  "streams",
  "an",
  "answer",
  "token",
  "by",
  "token",
  "while",
  "Telegram",
  "shows",
  "a",
  "draft",
  "that",
  "grows",
  "into",
  "message",
  "and",
  "every",
  "word",
  "arrives",
  "in",
  "order",
  "with",
  "latency",
  "pacing",
  "limits",
  "final",
  "text",
  "chat",
] as const;

/** A token stream's plan: the tokens and when each is produced (Telegram ms from the start). */
export interface TokenPlan {
  readonly tokens: readonly string[];
  readonly atMs: readonly number[];
}

/**
 * `hz` tokens per second for `durationMs`, each one word and a space (a paragraph break every
 * 60). The same seed gives every contender the same text.
 */
export function tokenPlan(hz: number, durationMs: number, seed: number): TokenPlan {
  const random = seededRandom(seed);
  const count = Math.floor((hz * durationMs) / 1000);
  const tokens: string[] = [];
  const atMs: number[] = [];
  for (let index = 0; index < count; index++) {
    const word = VOCABULARY[randomInt(random, 0, VOCABULARY.length - 1)] as string;
    const end = index % 60 === 59 ? ".\n\n" : " ";
    tokens.push(`${word}${end}`);
    atMs.push((index * 1000) / hz);
  }
  return { tokens, atMs };
}

/** How many tokens a text on screen holds (its words). */
export function tokenCount(text: string | undefined): number {
  if (text === undefined) return 0;
  let count = 0;
  for (const word of text.split(/\s+/)) if (word !== "") count++;
  return count;
}

/**
 * Yields the plan's tokens in real time, `scale` times faster than Telegram time, and records
 * when each was produced (real `performance.now()`).
 */
export async function* produce(
  plan: TokenPlan,
  scale: number,
  producedAt: number[],
  signal?: AbortSignal,
): AsyncGenerator<string> {
  const startedAt = performance.now();
  for (let index = 0; index < plan.tokens.length; index++) {
    if (signal?.aborted) return;
    const due = startedAt + (plan.atMs[index] as number) / scale;
    const wait = due - performance.now();
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
    producedAt.push(performance.now());
    yield plan.tokens[index] as string;
  }
}
