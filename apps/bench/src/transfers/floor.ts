// What the link alone costs one response, with nothing else on it: on a new connection
// (handshake and slow start from the initial window) and on a warm one. No gate can deliver a
// file faster, so these bound how far any small-file ratio between gates can go.

import { ManualClock } from "@telepace/core";
import { type LinkModel, TimedLink } from "./link.js";

/** A lone response's duration on an otherwise idle link, ms, at the mean round trip. */
export interface LinkFloor {
  readonly bytes: number;
  /** From sending the request on a new connection to the last byte. */
  readonly coldMs: number;
  /** The same request again, at once, on that connection (its window grown by the first). */
  readonly warmMs: number;
}

export async function linkFloor(model: LinkModel, bytes: number): Promise<LinkFloor> {
  const clock = new ManualClock();
  const link = new TimedLink({ clock, ...model, roundTripJitter: 0, seed: 1 });
  const timed = async (): Promise<number> => {
    const startedAt = clock.now();
    const done = link.fetch(bytes, 0);
    await clock.runAll();
    await done;
    return clock.now() - startedAt;
  };
  const coldMs = await timed();
  const warmMs = await timed();
  return { bytes, coldMs, warmMs };
}
