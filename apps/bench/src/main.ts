// `pnpm bench [writes|dispatch|transfers|scaleout …] [--full]`: runs the chosen areas in this
// process, prints their tables and writes every figure with the environment to results/latest.json.

import { mkdir, readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { runBroadcast } from "./broadcast/run.js";
import { runDispatch } from "./dispatch/run.js";
import { collectEnvironment } from "./environment.js";
import { type AreaResult, type BenchReport, jsonReplacer } from "./report.js";
import { runScaleoutArea } from "./scaleout/run.js";
import { type BenchScope, parseBenchArguments } from "./scope.js";
import { runStreaming } from "./streaming/run.js";
import { renderTable } from "./table.js";
import { telepaceLoadedFrom } from "./telepace-loading.js";
import { runTransfers } from "./transfers/run.js";
import { runWrites } from "./writes/run.js";

const AREAS: Readonly<Record<string, (scope: BenchScope) => Promise<AreaResult>>> = {
  writes: (scope) => runWrites(undefined, undefined, scope),
  dispatch: (scope) => runDispatch(undefined, scope),
  transfers: () => runTransfers(),
  scaleout: (scope) => runScaleoutArea(undefined, scope),
  streaming: () => runStreaming(),
  broadcast: (scope) => runBroadcast(undefined, scope),
};

const RESULTS_FILE = fileURLToPath(new URL("../results/latest.json", import.meta.url));

async function main(argv: readonly string[]): Promise<void> {
  const { areas: named, scope } = parseBenchArguments(argv, Object.keys(AREAS));
  const chosen = named.length === 0 ? Object.keys(AREAS) : named;
  // Users run the built packages; the source (through tsx) carries transform helpers on hot paths.
  const environment = { ...collectEnvironment(), telepaceLoadedFrom: telepaceLoadedFrom() };
  if (typeof (globalThis as { gc?: unknown }).gc !== "function") {
    console.warn("note: run with --expose-gc (as `pnpm bench` does) for stable heap figures");
  }
  console.log(
    `telepace bench — ${environment.node} on ${environment.cpuCount}× ${environment.cpuModel}, commit ${environment.commit.slice(0, 12)}${environment.isDirty === true ? " (dirty)" : ""}, load ${environment.loadAverage1m.toFixed(2)}, telepace from ${environment.telepaceLoadedFrom}, ${scope === "full" ? "every row (--full)" : "the rows the summaries read (--full: every row)"}\n`,
  );
  const startedAt = performance.now();
  const areas: Record<string, unknown> = {};
  for (const name of chosen) {
    console.log(`Running ${name}…\n`);
    const run = AREAS[name] as (scope: BenchScope) => Promise<AreaResult>;
    const result = await run(scope);
    areas[name] = { ...(result.figures as object), scope, durationMs: result.durationMs };
    for (const table of result.tables) console.log(`${renderTable(table)}\n`);
    console.log(`(${name}: ${(result.durationMs / 1000).toFixed(1)} s)\n`);
  }
  const report: BenchReport = {
    environment,
    invocation: argv,
    durationMs: performance.now() - startedAt,
    // Areas not run this time keep their figures from the file, so one area can be re-run alone.
    areas: { ...(await previousAreas()), ...areas },
  };
  await mkdir(path.dirname(RESULTS_FILE), { recursive: true });
  await writeFile(RESULTS_FILE, `${JSON.stringify(report, jsonReplacer, 2)}\n`);
  console.log(
    `Wrote ${path.relative(process.cwd(), RESULTS_FILE)} in ${(report.durationMs / 1000).toFixed(1)} s.`,
  );
}

/** The areas of the results file as it stands, or none when it is missing or unreadable. */
async function previousAreas(): Promise<Record<string, unknown>> {
  try {
    const previous = JSON.parse(await readFile(RESULTS_FILE, "utf8")) as Partial<BenchReport>;
    return typeof previous.areas === "object" && previous.areas !== null
      ? { ...previous.areas }
      : {};
  } catch {
    return {};
  }
}

main(process.argv.slice(2)).then(
  // Peers may leave timers behind (queued retries, limiter heartbeats); the results are written.
  () => process.exit(0),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
