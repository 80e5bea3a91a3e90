// maxInWindow: the most bot messages (sends and edits) to one chat within any window, read from a
// transcript — the demo's evidence that pacing kept to Telegram's limits.

import type { TranscriptEvent, TranscriptEventKind } from "@telepace/bot-api-sim";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { maxInWindow } from "../src/demo/send-rates.js";

let seq = 0;
function event(
  atMs: number,
  kind: TranscriptEventKind = "send",
  actor: "bot" | "user" = "bot",
): TranscriptEvent {
  seq++;
  return { seq, kind, atMs, date: 0, chatId: 1, actor, actorId: 1 };
}

/** The definition, by brute force: for each event, how many counted events start in [t, t + w). */
function bruteForce(events: readonly TranscriptEvent[], windowMs: number): number {
  const times = events
    .filter((e) => e.actor === "bot" && (e.kind === "send" || e.kind === "edit"))
    .map((e) => e.atMs);
  return Math.max(0, ...times.map((t) => times.filter((u) => u >= t && u < t + windowMs).length));
}

describe("maxInWindow", () => {
  it("is 0 without bot messages", () => {
    expect(maxInWindow([], 1000)).toBe(0);
    expect(maxInWindow([event(0, "send", "user"), event(5, "delete")], 1000)).toBe(0);
  });

  it("counts sends and edits of the bot, not deletes, chat actions or users", () => {
    const events = [
      event(0),
      event(10, "edit"),
      event(20, "delete"),
      event(30, "chat_action"),
      event(40, "send", "user"),
      event(50),
    ];
    expect(maxInWindow(events, 1000)).toBe(3);
  });

  it("uses a half-open window: events exactly windowMs apart are in different windows", () => {
    expect(maxInWindow([event(0), event(1000), event(2000)], 1000)).toBe(1);
    expect(maxInWindow([event(0), event(999), event(1998)], 1000)).toBe(2);
  });

  it("does not depend on the order of the events", () => {
    expect(maxInWindow([event(900), event(0), event(100), event(5000)], 1000)).toBe(3);
  });

  it("equals the brute-force count for any events and window", () => {
    const arbitraryEvent = fc
      .record({
        atMs: fc.integer({ min: 0, max: 5000 }),
        kind: fc.constantFrom<TranscriptEventKind>("send", "edit", "delete", "chat_action"),
        actor: fc.constantFrom<"bot" | "user">("bot", "user"),
      })
      .map(({ atMs, kind, actor }) => event(atMs, kind, actor));
    fc.assert(
      fc.property(
        fc.array(arbitraryEvent, { maxLength: 60 }),
        fc.integer({ min: 1, max: 3000 }),
        (events, windowMs) => {
          expect(maxInWindow(events, windowMs)).toBe(bruteForce(events, windowMs));
        },
      ),
      { numRuns: 300 },
    );
  });
});
