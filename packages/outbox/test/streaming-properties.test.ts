import { ManualClock } from "@telepace/core";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { StreamRegistry, TelegramOutbox } from "../src/index.js";
import { ScriptedTransport } from "./support/stream-transport.js";

interface Piece {
  readonly gapMs: number;
  readonly text: string;
}

const pieces = fc.array(
  fc.record({
    gapMs: fc.integer({ min: 0, max: 40 }),
    text: fc.string({ minLength: 1, maxLength: 12 }),
  }),
  { minLength: 1, maxLength: 150 },
);

async function run(chatId: number, schedule: readonly Piece[], latencyMs: number, limit: number) {
  const clock = new ManualClock();
  const outbox = new TelegramOutbox({ clock, pacingMarginMs: 0 });
  const api = new ScriptedTransport(clock, latencyMs);
  const streams = new StreamRegistry({ outbox, transport: api.transport, clock });
  const stream = streams.open(chatId, { maxTextLength: limit });
  let maxPending = 0;
  let full = "";
  for (const piece of schedule) {
    stream.append(piece.text);
    full += piece.text;
    await clock.advance(piece.gapMs);
    maxPending = Math.max(maxPending, outbox.snapshot().pending + outbox.snapshot().inFlight);
  }
  stream.end();
  for (let i = 0; i < 200 && stream.snapshot().state !== "ended"; i++) {
    await clock.advance(1000);
    maxPending = Math.max(maxPending, outbox.snapshot().pending + outbox.snapshot().inFlight);
  }
  return { api, outcome: await stream.result, full, maxPending };
}

describe("streaming properties (fast-check, ManualClock)", () => {
  it("a producer faster than Telegram holds one request, paces drafts and loses no text", async () => {
    await fc.assert(
      fc.asyncProperty(
        pieces,
        fc.integer({ min: 1, max: 150 }),
        fc.constantFrom(64, 4096),
        async (schedule, latencyMs, limit) => {
          const { api, outcome, full, maxPending } = await run(42, schedule, latencyMs, limit);
          // Nothing is queued beyond the one request of the stream: no backlog of frames.
          expect(maxPending).toBeLessThanOrEqual(1);
          expect(api.maxInFlight).toBe(1);
          const drafts = api.of("sendMessageDraft");
          for (let i = 1; i < drafts.length; i++) {
            const gap = (drafts[i]?.startedAt ?? 0) - (drafts[i - 1]?.startedAt ?? 0);
            expect(gap).toBeGreaterThanOrEqual(200);
          }
          expect(outcome.status).toBe("delivered");
          expect(api.texts("sendMessage").join("")).toBe(full.trim() === "" ? "" : full);
          for (const draft of drafts) {
            expect(String(draft.params.text).length).toBeLessThanOrEqual(limit);
          }
        },
      ),
      { numRuns: 60 },
    );
  });

  it("in a group: one request at a time, the final message holds the whole text", async () => {
    await fc.assert(
      fc.asyncProperty(pieces, fc.integer({ min: 1, max: 150 }), async (schedule, latencyMs) => {
        const { api, outcome, full, maxPending } = await run(-100, schedule, latencyMs, 4096);
        expect(maxPending).toBeLessThanOrEqual(1);
        expect(api.maxInFlight).toBe(1);
        expect(api.of("sendMessageDraft")).toHaveLength(0);
        if (full.trim() !== "") {
          expect(outcome.status).toBe("delivered");
          expect(outcome.messages.at(-1)?.text).toBe(full);
        }
      }),
      { numRuns: 40 },
    );
  });
});
