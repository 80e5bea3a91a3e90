// The transfer area's tables: every cell a median over rounds (a ratio is the median of the
// per-round ratios, each pairing contenders of one round), the round trip as run in the notes.

import type { Rounds } from "../rounds.js";
import { formatCount, formatFixed, formatRatio, formatSpread, ratio, spread } from "../stats.js";
import type { Table } from "../table.js";
import { P_QUEUE_CONCURRENCY } from "./contenders.js";
import type { FairnessFigures, MixedFigures } from "./figures.js";
import { CHUNK_BYTES } from "./files.js";
import { GRANT_CONTENDERS, type GrantSample } from "./grants.js";
import type { LinkModel } from "./link.js";
import type { TransfersMeasurements } from "./measurements.js";

const MiB = 1024 * 1024;
const KiB = 1024;

/** The median over rounds of one contender's figure. */
function medianOf<R>(rounds: Rounds<R>, id: string, pick: (result: R) => number): number {
  return spread(rounds.of(id).map(pick)).median;
}

/** The median over rounds of `id`'s figure ÷ `baseId`'s in the same round. */
function ratioOf<R>(
  rounds: Rounds<R>,
  id: string,
  baseId: string,
  pick: (result: R) => number,
): number {
  return spread(rounds.perRound((result) => ratio(pick(result(id)), pick(result(baseId))))).median;
}

function mb(bytes: number): string {
  return `${formatFixed(bytes / MiB, 1)} MiB`;
}

function ms(value: number): string {
  return `${formatFixed(value, 0)} ms`;
}

function describeLink(link: LinkModel): string {
  return `${mb(link.bytesPerSecond)}/s link, ${mb(link.connectionBytesPerSecond)}/s per connection, ${link.roundTripMs} ms ± ${link.roundTripJitter * 100}% round trips`;
}

/** The round trip the run had: mean send → first byte of the defaults' requests, over rounds. */
function roundTripAsRun(rounds: Rounds<MixedFigures>): string {
  const measured = spread(rounds.of("defaults").map((figures) => figures.firstByteMs));
  return formatSpread(measured, (value) => `${formatFixed(value, 1)} ms`);
}

const smallP50 = (figures: MixedFigures): number => figures.smallCompletionMs.p50;
const smallP99 = (figures: MixedFigures): number => figures.smallCompletionMs.p99;
const largeMean = (figures: MixedFigures): number => figures.largeCompletionMs.mean;

function mixedTable(
  title: string,
  rounds: Rounds<MixedFigures>,
  measured: TransfersMeasurements,
): Table {
  const { config, floor } = measured;
  const ids = rounds.rounds[0]?.order ?? [];
  const order = [
    "defaults",
    "large8MiB",
    "originalLimits",
    "pQueueFifo",
    "pQueueSmallFirst",
    "noLimit",
  ];
  const rows = order.filter((id) => ids.includes(id));
  return {
    title,
    columns: [
      { header: "gate", align: "left" },
      { header: "small p50 vs p-queue small first" },
      { header: "small p99 vs p-queue small first" },
      { header: "small p99 vs p-queue FIFO" },
      { header: "large mean vs no limit" },
      { header: "throughput vs link" },
      { header: "peak in flight" },
      { header: "handshakes" },
    ],
    rows: rows.map((id) => [
      rounds.get(0, id).gate,
      formatRatio(ratioOf(rounds, id, "pQueueSmallFirst", smallP50)),
      formatRatio(ratioOf(rounds, id, "pQueueSmallFirst", smallP99)),
      formatRatio(ratioOf(rounds, id, "pQueueFifo", smallP99)),
      formatRatio(ratioOf(rounds, id, "noLimit", largeMean)),
      formatRatio(medianOf(rounds, id, (figures) => figures.throughputVsLink)),
      mb(medianOf(rounds, id, (figures) => figures.peakBytesInFlight)),
      formatCount(medianOf(rounds, id, (figures) => figures.handshakes)),
    ]),
    notes: [
      `p-queue small files first: small p50 ${ms(medianOf(rounds, "pQueueSmallFirst", smallP50))}, p99 ${ms(medianOf(rounds, "pQueueSmallFirst", smallP99))}; p-queue FIFO: p99 ${ms(medianOf(rounds, "pQueueFifo", smallP99))}; no limit: large mean ${ms(medianOf(rounds, "noLimit", largeMean))}; telepace defaults: small p99 ${ms(medianOf(rounds, "defaults", smallP99))} (simulated time)`,
      `round trip as run: ${roundTripAsRun(rounds)} from sending a request on an open connection to its first byte (median of the rounds' means, min–max); a new connection first pays ${config.link.connection.handshakeRoundTrips} round trips of handshake`,
      `the link alone: a ${floor.bytes / KiB} KiB file takes ${ms(floor.coldMs)} on a new connection (handshake, then slow start from ${formatCount(config.link.connection.initialWindowBytes)} bytes), ${ms(floor.warmMs)} on a warm one; small p99 ÷ that cold time: telepace defaults ${formatRatio(medianOf(rounds, "defaults", smallP99) / floor.coldMs)}, p-queue small files first ${formatRatio(medianOf(rounds, "pQueueSmallFirst", smallP99) / floor.coldMs)}`,
      `each file keeps at most ${config.requestWindow} Range requests of ${CHUNK_BYTES / KiB} KiB asked for at once; p-queue's ${P_QUEUE_CONCURRENCY} slots hold as many chunks as the scheduler's 16 MiB`,
      `medians over ${config.rounds} rounds (each with its own seed for the small sizes and the jitter, contenders in a seeded order); every round is in the JSON`,
    ],
  };
}

function roundTripTable(measured: TransfersMeasurements): Table {
  const { config } = measured;
  const runs = [
    { roundTripMs: config.link.roundTripMs, rounds: measured.mixed },
    ...measured.byRoundTrip,
  ].sort((a, b) => a.roundTripMs - b.roundTripMs);
  const throughput = (rounds: Rounds<MixedFigures>, id: string): string =>
    formatRatio(medianOf(rounds, id, (figures) => figures.throughputVsLink));
  return {
    title: `Transfers, the light mixed load at other round trips (±${config.link.roundTripJitter * 100}% jitter): small p99 vs p-queue with small files first, throughput vs link`,
    columns: [
      { header: "round trip (as run)", align: "left" },
      { header: "defaults p99" },
      { header: "original limits p99" },
      { header: "defaults throughput" },
      { header: "original limits throughput" },
      { header: "p-queue throughput" },
      { header: "no limit throughput" },
    ],
    rows: runs.map(({ roundTripMs, rounds }) => [
      `${roundTripMs} ms: ${roundTripAsRun(rounds)}`,
      formatRatio(ratioOf(rounds, "defaults", "pQueueSmallFirst", smallP99)),
      formatRatio(ratioOf(rounds, "originalLimits", "pQueueSmallFirst", smallP99)),
      throughput(rounds, "defaults"),
      throughput(rounds, "originalLimits"),
      throughput(rounds, "pQueueSmallFirst"),
      throughput(rounds, "noLimit"),
    ]),
    notes: [
      "no limit is the ceiling for this load and request window: what is left below 1.00× is the link's own handshakes, slow start and the last file's tail",
    ],
  };
}

function fairnessTable(measured: TransfersMeasurements): Table {
  const { config, fairness } = measured;
  const ids = ["defaults", "originalLimits", "pQueueFifo", "noLimit"];
  const completion = (pick: "p50" | "max") => (figures: FairnessFigures) =>
    figures.completionMs[pick];
  return {
    title: `Transfers, fairness: ${config.equal.count} equal files of ${mb(config.equal.sizeBytes)} started together, every gate at its defaults (p-queue: ${P_QUEUE_CONCURRENCY} slots), ${describeLink(config.link)}`,
    columns: [
      { header: "gate", align: "left" },
      { header: "Jain's index" },
      { header: "completion p50" },
      { header: "completion max" },
      { header: "throughput vs link" },
    ],
    rows: ids.map((id) => [
      fairness.get(0, id).gate,
      formatFixed(
        medianOf(fairness, id, (figures) => figures.jain),
        3,
      ),
      formatRatio(ratioOf(fairness, id, "defaults", completion("p50"))),
      formatRatio(ratioOf(fairness, id, "defaults", completion("max"))),
      formatRatio(medianOf(fairness, id, (figures) => figures.throughputVsLink)),
    ]),
    notes: [
      "Jain's index over the bytes each file had received when the first file finished (1 = equal shares, 1/n = one file took all)",
      `each file keeps at most ${config.requestWindow} requests asked for, so ${config.equal.count} files ask for more than the 16 MiB budget holds; completion ratios are each row ÷ the first row`,
    ],
  };
}

function grantTable(measured: TransfersMeasurements): Table {
  const { config, grants } = measured;
  const grantCount = config.grants.transfers * config.grants.grantsPerTransfer;
  const overheadUs = (id: string): number =>
    spread(
      grants.perRound((result) => ((result(id).cpuMs - result("none").cpuMs) * 1000) / grantCount),
    ).median;
  const cpu = (sample: GrantSample): number => sample.cpuMs;
  return {
    title: `Transfers, grant overhead at ${formatCount(config.grants.transfers)} transfers (${formatCount(config.grants.grantsPerTransfer)} grants each, no I/O, real time, median of ${config.rounds} interleaved rounds)`,
    columns: [
      { header: "contender", align: "left" },
      { header: "CPU time vs no gate" },
      { header: "overhead/grant vs p-queue" },
    ],
    rows: GRANT_CONTENDERS.map(({ id, name }) => [
      name,
      formatRatio(ratioOf(grants, id, "none", cpu)),
      id === "none"
        ? "—"
        : formatRatio(
            spread(
              grants.perRound((result) =>
                ratio(
                  result(id).cpuMs - result("none").cpuMs,
                  result("p-queue").cpuMs - result("none").cpuMs,
                ),
              ),
            ).median,
          ),
    ]),
    notes: [
      `CPU time (user + system) of the process, minus the bare loop's in the same round: telepace ${formatFixed(overheadUs("scheduler"), 2)} µs per grant, p-queue ${formatFixed(overheadUs("p-queue"), 2)} µs`,
    ],
  };
}

function summaryTable(measured: TransfersMeasurements): Table {
  const { summary } = measured;
  const values = summary as unknown as Record<string, number>;
  const names = Object.keys(values).filter(
    (key) => key !== "rounds" && !key.endsWith("Min") && !key.endsWith("Max"),
  );
  return {
    title: "Transfers, summary (areas.transfers.summary): telepace at its defaults",
    columns: [
      { header: "figure", align: "left" },
      { header: "median" },
      { header: "min" },
      { header: "max" },
    ],
    rows: [
      ["rounds", formatCount(summary.rounds), "", ""],
      ...names.map((name) => [
        name,
        formatFixed(values[name] as number, 3),
        formatFixed(values[`${name}Min`] as number, 3),
        formatFixed(values[`${name}Max`] as number, 3),
      ]),
    ],
    notes: [],
  };
}

/** Every table of the area, in print order. */
export function transfersTables(measured: TransfersMeasurements): Table[] {
  const { config } = measured;
  const { mixed: plan } = config;
  const smallText = `${plan.small.count} small files of ${plan.small.minBytes / KiB}–${plan.small.maxBytes / KiB} KiB one every ${plan.small.intervalMs} ms`;
  const mixedTitle = (largeCount: number, label: string) =>
    `Transfers, small files while large ones run (${label}): ${largeCount} × ${mb(plan.large.sizeBytes)} from t=0, ${smallText}, ${describeLink(config.link)} (simulated time)`;
  return [
    mixedTable(mixedTitle(plan.large.count, "light"), measured.mixed, measured),
    mixedTable(
      mixedTitle(config.loadedLarge.count, "loaded: more requests than p-queue has slots"),
      measured.loaded,
      measured,
    ),
    roundTripTable(measured),
    fairnessTable(measured),
    grantTable(measured),
    summaryTable(measured),
  ];
}
