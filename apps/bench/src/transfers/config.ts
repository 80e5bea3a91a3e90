// The sizes of the transfer comparison and the link it runs over: one place, so the tables, the
// JSON and the README describe the same run.

import type { MixedPlan } from "./files.js";
import type { GrantConfig } from "./grants.js";
import type { LinkModel } from "./link.js";

const MiB = 1024 * 1024;
const KiB = 1024;

/** Sizes of the transfer comparison. */
export interface TransfersConfig {
  /** The headline link every scenario crosses. */
  readonly link: LinkModel;
  /** Range requests each file has asked for and not yet received, at most (every contender). */
  readonly requestWindow: number;
  /** Large files from the start, small ones arriving while they run. */
  readonly mixed: MixedPlan;
  /** The mixed load with more large files: enough requests to fill every gate. */
  readonly loadedLarge: MixedPlan["large"];
  /** Equal files started together, for Jain's index at default options. */
  readonly equal: { readonly count: number; readonly sizeBytes: number };
  /** The mixed load again at these mean round trips, ms. */
  readonly roundTripsMs: readonly number[];
  readonly grants: GrantConfig;
  readonly rounds: number;
  readonly seed: number;
}

/** The full-size configuration `pnpm bench` uses. */
export const transfersConfig: TransfersConfig = {
  link: {
    bytesPerSecond: 64 * MiB,
    // About what one Telegram transfer reaches at best (16.4–16.7 MiB/s measured for TDLib,
    // mtcute and MTKruto), so one response never carries more than a quarter of the link.
    connectionBytesPerSecond: 16 * MiB,
    roundTripMs: 30,
    roundTripJitter: 0.2,
    connection: {
      initialWindowBytes: 10 * 1460,
      handshakeRoundTrips: 2,
      idleRestartMs: 200,
      keepAliveMs: 4_000,
    },
  },
  requestWindow: 4,
  mixed: {
    large: { count: 3, sizeBytes: 20 * MiB }, // the Bot API's download limit
    small: {
      count: 160,
      minBytes: 16 * KiB,
      maxBytes: 256 * KiB,
      firstStartMs: 100,
      intervalMs: 6,
    },
  },
  loadedLarge: { count: 12, sizeBytes: 20 * MiB },
  equal: { count: 16, sizeBytes: 4 * MiB },
  roundTripsMs: [5, 50],
  grants: { transfers: 1_000, grantsPerTransfer: 20 },
  rounds: 7,
  seed: 7,
};
