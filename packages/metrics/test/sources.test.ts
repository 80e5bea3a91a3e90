// The components fit the structural source types this package declares instead of depending on
// the packages (checked by the package's tsc; the test itself only constructs them).

import { MediaSchedulerRegistry } from "@telepace/media-scheduler";
import { TelegramOutbox } from "@telepace/outbox";
import { UpdateDispatcher, UpdateIntake } from "@telepace/update-dispatch";
import { describe, expect, it } from "vitest";
import type {
  MediaRegistrySource,
  OutboxSource,
  UpdateDispatcherSource,
  UpdateIntakeSource,
} from "../src/index.js";

describe("source types", () => {
  it("accept the real components", async () => {
    const outbox: OutboxSource = new TelegramOutbox();
    const intake: UpdateIntakeSource = new UpdateIntake(() => undefined);
    const dispatcher: UpdateDispatcherSource = new UpdateDispatcher(() => undefined);
    const mediaRegistry: MediaRegistrySource = new MediaSchedulerRegistry();
    for (const source of [outbox, intake, dispatcher, mediaRegistry]) {
      expect(Object.isFrozen(source.snapshot())).toBe(true);
    }
    await Promise.all([
      (outbox as TelegramOutbox).close(),
      (intake as UpdateIntake).close(),
      (dispatcher as UpdateDispatcher).close(),
      (mediaRegistry as MediaSchedulerRegistry).close(),
    ]);
  });
});
