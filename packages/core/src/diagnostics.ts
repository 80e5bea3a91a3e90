// One way to publish typed events on node:diagnostics_channel, named `telepace:<package>:<event>`:
// the event is built only when someone listens, and frozen before anyone sees it.

import diagnosticsChannel from "node:diagnostics_channel";

/** Publishes one event type's event, building it only when the channel has subscribers. */
export type Publish<E extends { readonly type: string }> = <T extends E["type"]>(
  type: T,
  build: () => Extract<E, { readonly type: NoInfer<T> }>,
) => void;

/**
 * The channel names of a package's events, `telepace:<packageName>:<type>` for each type.
 *
 * @example
 * export const outboxChannels = channelNames("outbox", ["enqueued", "settled"] as const);
 */
export function channelNames<T extends string>(
  packageName: string,
  types: readonly T[],
): Readonly<Record<T, string>> {
  const names = {} as Record<T, string>;
  for (const type of types) names[type] = `telepace:${packageName}:${type}`;
  return Object.freeze(names);
}

/**
 * A publisher over the given channel names. A subscriber that throws is Node's concern
 * (reported on `process`'s `uncaughtException` path by diagnostics_channel), not the publisher's.
 *
 * @example
 * const publish = createPublisher<OutboxEvent>(outboxChannels);
 * publish("settled", () => ({ type: "settled", key, status }));
 */
export function createPublisher<E extends { readonly type: string }>(
  names: Readonly<Record<E["type"], string>>,
): Publish<E> {
  const channels = new Map<string, diagnosticsChannel.Channel>(
    Object.entries(createChannels(names)),
  );
  return (type, build) => {
    const channel = channels.get(type);
    if (channel?.hasSubscribers) channel.publish(Object.freeze(build()));
  };
}

/**
 * The channel objects behind the given names, for a hot path that checks `hasSubscribers` itself
 * and so allocates nothing per event when nobody listens (a {@link Publish} call allocates its
 * `build` closure). Publish frozen events, as {@link createPublisher} does.
 *
 * @example
 * const channels = createChannels(dispatchChannelNames);
 * if (channels.started.hasSubscribers) channels.started.publish(Object.freeze({ type: "started" }));
 */
export function createChannels<T extends string>(
  names: Readonly<Record<T, string>>,
): Readonly<Record<T, diagnosticsChannel.Channel>> {
  const channels = {} as Record<T, diagnosticsChannel.Channel>;
  for (const [type, name] of Object.entries(names) as [T, string][]) {
    channels[type] = diagnosticsChannel.channel(name);
  }
  return Object.freeze(channels);
}
