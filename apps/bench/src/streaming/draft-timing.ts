// When each draft reached the sim and was answered, from the sim's `request` diagnostics: how
// long a sender took from one draft's answer to its next draft, and how much of that a floor on
// draft spacing held it back; with the process CPU the run spent per frame.

import diagnosticsChannel from "node:diagnostics_channel";
import { botApiSimChannels, type RequestMessage } from "@telepace/bot-api-sim";
import { percentile } from "../stats.js";

/** Drafts telepace may start in a row under its floor (its draft pacer's burst). */
const FLOOR_BURST = 2;

/** One draft request as the sim saw it, real ms. */
interface DraftRequest {
  readonly startMs: number;
  readonly answeredMs: number;
}

/** What a run's drafts tell of the sender's own share of each frame (Telegram ms). */
export interface DraftTiming {
  /** Median from a draft's answer leaving the sim to the sender's next draft reaching it. */
  readonly turnaroundMs: number;
  /**
   * Of those gaps summed, the share spent before the sender's floor allowed the next draft (a
   * floor kept as telepace keeps it: one draft per `floorMs` on average, two at most in a row);
   * NaN for a sender with no floor.
   */
  readonly floorShare: number;
  /** Process CPU (user + system, real ms) over the run ÷ draft frames; the sim's share included. */
  readonly cpuMsPerFrame: number;
}

/** Records the drafts of one run (one sim, one chat streamed into) until `stop()`. */
export function recordDrafts(): {
  stop(frames: number, scale: number, floorMs?: number): DraftTiming;
} {
  const drafts: DraftRequest[] = [];
  const onRequest = (message: unknown) => {
    const request = message as RequestMessage;
    if (request.method !== "sendMessageDraft" || request.status !== 200) return;
    const answeredMs = performance.now();
    drafts.push({ startMs: answeredMs - request.durationMs, answeredMs });
  };
  const cpuAtStart = process.cpuUsage();
  diagnosticsChannel.subscribe(botApiSimChannels.request, onRequest);
  return {
    stop(frames, scale, floorMs) {
      diagnosticsChannel.unsubscribe(botApiSimChannels.request, onRequest);
      const cpu = process.cpuUsage(cpuAtStart);
      const gaps: number[] = [];
      let gapTotal = 0;
      let heldTotal = 0;
      // The floor's credit as the sender keeps it: a bucket of 2, one more per floorMs.
      let credit = FLOOR_BURST;
      let creditAtMs = (drafts[0]?.startMs ?? 0) * scale;
      const creditAt = (atMs: number) =>
        Math.min(FLOOR_BURST, credit + (atMs - creditAtMs) / (floorMs as number));
      for (let index = 1; index < drafts.length; index++) {
        const previous = drafts[index - 1] as DraftRequest;
        const next = drafts[index] as DraftRequest;
        const gap = Math.max(0, next.startMs - previous.answeredMs) * scale;
        gaps.push(gap);
        gapTotal += gap;
        if (floorMs !== undefined && floorMs > 0) {
          credit = creditAt(previous.startMs * scale) - 1;
          creditAtMs = previous.startMs * scale;
          const answeredMs = previous.answeredMs * scale;
          const short = 1 - creditAt(answeredMs);
          heldTotal += Math.min(gap, short > 0 ? short * floorMs : 0);
        }
      }
      gaps.sort((a, b) => a - b);
      return {
        turnaroundMs: gaps.length === 0 ? Number.NaN : percentile(gaps, 50),
        floorShare: floorMs === undefined || gapTotal === 0 ? Number.NaN : heldTotal / gapTotal,
        cpuMsPerFrame: frames === 0 ? Number.NaN : (cpu.user + cpu.system) / 1000 / frames,
      };
    },
  };
}
