// Records what a package publishes on its node:diagnostics_channel channels, for assertions on
// events without a listener of one's own in every test.

import diagnosticsChannel from "node:diagnostics_channel";

/** Events recorded so far, and a way to stop recording. */
export interface ChannelRecorder<E> extends Disposable {
  /** Every event in publication order. */
  readonly events: E[];
  /** Unsubscribes from every channel; idempotent. */
  stop(): void;
}

/**
 * Subscribes to every channel in `names` (a package's `…Channels` object) until `stop()`.
 * `onEvent`, when given, also sees each event synchronously as it is published (to check an
 * invariant at that moment, or to re-enter the publisher).
 *
 * @example
 * using recorder = recordChannels<OutboxEvent>(outboxChannels);
 */
export function recordChannels<E>(
  names: Readonly<Record<string, string>>,
  onEvent?: (event: E) => void,
): ChannelRecorder<E> {
  const events: E[] = [];
  const listener = (message: unknown): void => {
    events.push(message as E);
    onEvent?.(message as E);
  };
  const channels = [...new Set(Object.values(names))];
  for (const name of channels) diagnosticsChannel.subscribe(name, listener);
  let stopped = false;
  const stop = () => {
    if (stopped) return;
    stopped = true;
    for (const name of channels) diagnosticsChannel.unsubscribe(name, listener);
  };
  return { events, stop, [Symbol.dispose]: stop };
}
