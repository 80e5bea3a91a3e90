// Figures of a streaming run from the sim's timed transcript: how stale the text on screen was,
// when the final messages held every token, and whether any was lost.

import type { SimCounters, TranscriptEvent } from "@telepace/bot-api-sim";
import { percentile } from "../stats.js";
import { tokenCount } from "./tokens.js";

/** What one contender's run measured (Telegram ms). */
export interface StreamRunFigures {
  readonly apiCalls: number;
  readonly callsByMethod: Readonly<Record<string, number>>;
  readonly tooManyRequests: number;
  /** Sampled every 50 ms while tokens were produced: how long the screen lagged the producer. */
  readonly stalenessMs: { readonly samples: number; readonly p50: number; readonly p99: number };
  /** From the last token produced to a message holding it (NaN when it never arrived). */
  readonly finalLatencyMs: number;
  /** 1 when the messages in the chat never came to hold the last token, else 0. */
  readonly lostFinals: number;
  /** Messages left in the chat. */
  readonly messages: number;
  /** Draft frames the sim accepted. */
  readonly draftFrames: number;
}

interface Shown {
  readonly atMs: number;
  /** Tokens on screen: the messages' and the draft's. */
  readonly visible: number;
  /** Tokens in the chat's messages alone. */
  readonly inMessages: number;
}

/** How many tokens were on screen after each event of the bot, by real time. */
function visibleTrace(events: readonly TranscriptEvent[]): Shown[] {
  const messages = new Map<number, number>();
  let draft = 0;
  const trace: Shown[] = [];
  for (const event of events) {
    if (event.actor !== "bot") continue;
    if ((event.kind === "send" || event.kind === "edit") && event.messageId !== undefined) {
      messages.set(event.messageId, tokenCount(event.text));
      draft = 0; // a message of the bot removes the draft
    } else if (event.kind === "delete" && event.messageId !== undefined) {
      messages.delete(event.messageId);
    } else if (event.kind === "draft") {
      draft = tokenCount(event.text);
    } else continue;
    let inMessages = 0;
    for (const count of messages.values()) inMessages += count;
    trace.push({ atMs: event.atMs, visible: inMessages + draft, inMessages });
  }
  return trace;
}

/** Computes a run's figures; `producedAt` holds each token's real production time. */
export function analyseStream(
  events: readonly TranscriptEvent[],
  counters: SimCounters,
  producedAt: readonly number[],
  tokenTotal: number,
  scale: number,
  sampleEveryTelegramMs = 50,
): StreamRunFigures {
  const trace = visibleTrace(events);
  const staleness: number[] = [];
  const first = producedAt[0];
  const last = producedAt[producedAt.length - 1];
  if (first !== undefined && last !== undefined) {
    let at = -1;
    let visible = 0;
    let produced = 0;
    for (let t = first; t <= last; t += sampleEveryTelegramMs / scale) {
      while (at + 1 < trace.length && (trace[at + 1]?.atMs as number) <= t) {
        at++;
        visible = trace[at]?.visible as number;
      }
      while (produced < producedAt.length && (producedAt[produced] as number) <= t) produced++;
      // The oldest token produced but not on screen: how long the screen has lagged.
      const behind = visible >= produced ? 0 : t - (producedAt[visible] as number);
      staleness.push(behind * scale);
    }
  }
  staleness.sort((a, b) => a - b);
  // A contender that stopped reading its source (it gave up) has no staleness to speak of.
  const gaveUp = producedAt.length < tokenTotal;
  // The final: the first moment the chat's messages (not a draft) held every token.
  const final = trace.find((shown) => shown.inMessages >= tokenTotal);
  const complete = !gaveUp && (trace[trace.length - 1]?.inMessages ?? 0) >= tokenTotal;
  return {
    apiCalls: Object.values(counters.calls).reduce((sum, calls) => sum + calls, 0),
    callsByMethod: counters.calls,
    tooManyRequests: counters.tooManyRequests,
    stalenessMs: {
      samples: staleness.length,
      p50: gaveUp ? Number.NaN : percentile(staleness, 50),
      p99: gaveUp ? Number.NaN : percentile(staleness, 99),
    },
    finalLatencyMs:
      final === undefined || last === undefined ? Number.NaN : (final.atMs - last) * scale,
    lostFinals: complete && final !== undefined ? 0 : 1,
    messages: new Set(
      events.filter((e) => e.actor === "bot" && e.kind === "send").map((e) => e.messageId),
    ).size,
    draftFrames: events.filter((event) => event.kind === "draft").length,
  };
}
