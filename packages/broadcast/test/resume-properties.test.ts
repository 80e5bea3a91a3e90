// The resume invariants over random broadcasts cut by random crashes: a process dies after some
// deliveries (its journal writes stop, each request in flight reached Telegram or not) and the
// next one resumes from the records that outlived it, until one finishes. Nobody is skipped;
// nobody gets the message twice beyond the sends in flight at a crash; every recipient has one
// outcome; the counts add up. fast-check with a logged seed and a fixed number of runs.

import { ManualClock } from "@telepace/core";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { BroadcastRegistry, type BroadcastReport, JournalBroadcastStore } from "../src/index.js";
import { DurableRecords } from "./support/crashable-journal.js";
import { type ChatBehaviour, FakeTelegram, testOutbox } from "./support/fake-telegram.js";

const SEED = Number(process.env.TELEPACE_FC_SEED ?? Date.now() % 2 ** 31);
console.log(`resume-properties: fast-check seed ${SEED} (TELEPACE_FC_SEED to replay)`);

const behaviourOf = fc.constantFrom<ChatBehaviour>(
  "ok",
  "ok",
  "ok",
  "ok",
  "blocked",
  "missing",
  "bad-gateway",
  "rate-limited-once",
);

const scenario = fc.record({
  behaviours: fc.array(behaviourOf, { minLength: 1, maxLength: 60 }),
  batchSize: fc.integer({ min: 1, max: 12 }),
  paid: fc.boolean(),
  latencyMs: fc.integer({ min: 1, max: 80 }),
  resendInFlight: fc.boolean(),
  /** Each crash: deliveries in that process before it dies, and which in-flight requests had landed. */
  crashes: fc.array(
    fc.record({ afterDeliveries: fc.integer({ min: 0, max: 25 }), landed: fc.integer() }),
    { maxLength: 4 },
  ),
});

async function step(clock: ManualClock): Promise<void> {
  await clock.advance(5);
}

describe("resuming after crashes", () => {
  it("skips nobody, repeats only what was in flight at a crash, and accounts for everyone", async () => {
    await fc.assert(
      fc.asyncProperty(scenario, async (s) => {
        const records = new DurableRecords();
        const delivered = new Map<string, number>();
        const behaviour = (id: unknown): ChatBehaviour => s.behaviours[Number(id) - 1] ?? "ok";
        const recipients = s.behaviours.map((_, index) => index + 1);
        /** How often each chat's request was in flight when a process died. */
        const inFlightAtCrash = new Map<string, number>();
        const options = {
          message: { method: "sendMessage", params: { text: "news" } },
          recipients,
          paid: s.paid,
          batchSize: s.batchSize,
          resendInFlight: s.resendInFlight,
          leaseMs: 3_000,
        } as const;
        const run = (clock: ManualClock) => {
          const journal = records.open();
          const telegram = new FakeTelegram({
            clock,
            latencyMs: s.latencyMs,
            behaviour,
            delivered,
          });
          const registry = new BroadcastRegistry({
            outbox: testOutbox(clock),
            transport: telegram.transport,
            store: new JournalBroadcastStore(journal),
            clock,
          });
          return { journal, telegram, job: registry.start("p", options) };
        };
        for (const crash of s.crashes) {
          const clock = new ManualClock();
          const { journal, telegram, job } = run(clock);
          let ended = false;
          void job.result.then(() => {
            ended = true;
          });
          while (!ended && telegram.deliveries < crash.afterDeliveries && clock.now() < 120_000) {
            await step(clock);
          }
          if (ended) break; // it finished before this crash came
          journal.crash();
          let bits = crash.landed;
          const landed = (): boolean => {
            bits >>>= 1;
            return (bits & 1) === 1;
          };
          for (const chat of telegram.crash(landed)) {
            inFlightAtCrash.set(chat, (inFlightAtCrash.get(chat) ?? 0) + 1);
          }
        }
        const clock = new ManualClock();
        const { job } = run(clock);
        let report: BroadcastReport | undefined;
        void job.result.then((r) => {
          report = r;
        });
        while (report === undefined) {
          if (clock.now() > 600_000) throw new Error("the last run did not finish");
          await step(clock);
        }
        expect(report.status).toBe("completed");
        const counts = report.counts;
        // Everyone has exactly one outcome.
        expect(
          counts.sent +
            counts.blocked +
            counts.deactivated +
            counts.forbidden +
            counts.chatNotFound +
            counts.maybeDelivered +
            counts.failed,
        ).toBe(recipients.length);
        expect(counts.resentAfterCrash).toBeLessThanOrEqual(
          [...inFlightAtCrash.values()].reduce((a, b) => a + b, 0),
        );
        for (const [index, kind] of s.behaviours.entries()) {
          const chat = String(index + 1);
          const got = delivered.get(chat) ?? 0;
          const crashes = inFlightAtCrash.get(chat) ?? 0;
          // Nobody twice beyond the sends in flight at a crash.
          expect(got).toBeLessThanOrEqual(1 + crashes);
          // Nobody skipped: a reachable recipient got it, unless its only send was cut off by a
          // crash and resending was turned off (it is then reported maybe-delivered).
          if (kind === "ok" || kind === "rate-limited-once") {
            if (s.resendInFlight || crashes === 0) expect(got).toBeGreaterThanOrEqual(1);
          }
        }
        if (!s.resendInFlight) expect(counts.resentAfterCrash).toBe(0);
        // Records of finished batches are gone: only the broadcast's own record is left.
        expect([...records.records.keys()]).toEqual(["broadcast:p"]);
      }),
      { seed: SEED, numRuns: 120 },
    );
  }, 240_000);
});
