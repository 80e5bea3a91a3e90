// Every instrumented component at once on one ManualClock, each snapshot() counted, with work
// that exercises every channel: sends, a 429, dispatched and webhook updates, media grants.

import { ManualClock } from "@telepace/core";
import { MediaSchedulerRegistry, mediaChargeUnitBytes } from "@telepace/media-scheduler";
import { RetryAfterError, TelegramOutbox } from "@telepace/outbox";
import { UpdateDispatcher, UpdateIntake } from "@telepace/update-dispatch";
import { message, SECRET_TEXT } from "./updates.js";

/** A bot token in Telegram's shape; no metric may carry it. */
export const TOKEN = "123456789:AAHsecretTokenNeverInAMetric0000000";

function counted<T extends { snapshot(): unknown }>(target: T, calls: { count: number }): T {
  return {
    snapshot: () => {
      calls.count++;
      return target.snapshot();
    },
  } as T;
}

/** The four components, their counted views for the metrics, and `work()` to drive them. */
export function components() {
  const clock = new ManualClock();
  const snapshots = { count: 0 };
  const outbox = new TelegramOutbox({ clock, privateChatRps: 0, groupChatRps: 0, globalRps: 0 });
  const failure = new Error(
    `POST https://api.telegram.org/bot${TOKEN}/sendMessage: ${SECRET_TEXT}`,
  );
  const dispatcher = new UpdateDispatcher(
    (update) => {
      if (update.update_id % 2 === 0) throw failure;
    },
    { clock },
  );
  const intake = new UpdateIntake(() => undefined, { clock });
  const mediaRegistry = new MediaSchedulerRegistry({ clock });
  // Open throughout, so its scheduler (and its gauges) stay.
  const transfer = mediaRegistry.open({ dc: "api.telegram.org", direction: "download" });
  let round = 0;

  async function work(): Promise<void> {
    round++;
    let calls = 0;
    void outbox.enqueue({
      chatId: "@public_club",
      execute: () =>
        ++calls === 1
          ? Promise.reject(new RetryAfterError(1_000, { cause: failure }))
          : Promise.resolve(SECRET_TEXT),
    });
    void outbox.enqueue({ chatId: 42, execute: () => Promise.reject(failure) });
    void outbox.enqueue({ chatId: -1001, key: "edit:1", execute: () => Promise.resolve("ok") });
    await dispatcher.enqueue(message(round * 10 + 1, 42));
    await dispatcher.enqueue(message(round * 10 + 2, 43, -1001));
    await intake.accept(message(round * 10 + 3, 44));
    const permit = await transfer.acquire(mediaChargeUnitBytes);
    await clock.advance(1_000);
    permit.release();
    await clock.runAll();
  }

  return {
    clock,
    snapshots,
    sources: {
      outbox: counted(outbox, snapshots),
      dispatcher: counted(dispatcher, snapshots),
      intake: counted(intake, snapshots),
      mediaRegistry: counted(mediaRegistry, snapshots),
    },
    work,
    async close(): Promise<void> {
      transfer.close();
      await Promise.all([
        outbox.close(),
        dispatcher.close(),
        intake.close(),
        mediaRegistry.close(),
      ]);
    },
  };
}
