// The highest rate at which the bot wrote into any one chat, read from the sim's transcripts: the
// evidence that pacing kept to Telegram's limits.

import type { TranscriptEvent } from "@telepace/bot-api-sim";

/** Most bot messages (sends and edits) to one chat within any window of `windowMs`. */
export function maxInWindow(events: readonly TranscriptEvent[], windowMs: number): number {
  const times = events
    .filter((event) => event.actor === "bot" && (event.kind === "send" || event.kind === "edit"))
    .map((event) => event.atMs)
    .sort((a, b) => a - b);
  let best = 0;
  let start = 0;
  for (let end = 0; end < times.length; end++) {
    while ((times[end] as number) - (times[start] as number) >= windowMs) start++;
    best = Math.max(best, end - start + 1);
  }
  return best;
}
