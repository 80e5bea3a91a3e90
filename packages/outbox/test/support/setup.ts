// A manual-clock outbox with a recorder, shared by the scheduling tests.

import { ManualClock } from "@telepace/core";
import { TelegramOutbox, type TelegramOutboxOptions } from "../../src/index.js";
import { Recorder } from "./ops.js";

/**
 * An outbox on a ManualClock; pacing is off unless the options turn it on, and windows get no
 * margin, so scheduling assertions read in whole seconds.
 */
export function setup(options: TelegramOutboxOptions = {}) {
  const clock = new ManualClock();
  const outbox = new TelegramOutbox({
    clock,
    privateChatRps: 0,
    groupChatRps: 0,
    globalRps: 0,
    pacingMarginMs: 0,
    ...options,
  });
  return { clock, outbox, rec: new Recorder(clock) };
}
