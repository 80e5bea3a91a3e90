// The first example of each published package's README, checked the way a user meets it: the
// packages are built and packed (`pnpm pack`), a fresh project in a temporary directory installs
// the tarballs and what the README's Install section names with npm, a plain strict `tsc`
// (`--strict --module nodenext`, the repository's TypeScript, `@types/node`) compiles the
// examples as copied, and each compiled example runs with every Node given (see example-runs.ts).

import { execFile } from "node:child_process";
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { basename, dirname, join, relative } from "node:path";
import { pathToFileURL } from "node:url";
import { type RunPlan, runExample, runPlans, type Sim } from "./example-runs.js";
import {
  type Block,
  type Failure,
  firstUsageExample,
  installSpecs,
  packageNameOf,
} from "./readme-blocks.js";

/** Options of {@link checkPackedExamples}. */
export interface PackedCheckOptions {
  /** The repository root. */
  readonly root: string;
  /** The READMEs selected; those of published packages are checked. */
  readonly readmes: readonly string[];
  /** The Node binaries every compiled example runs with. */
  readonly nodes: readonly string[];
  /** Keep the temporary project (its path is logged) instead of removing it. */
  readonly keep?: boolean;
  readonly log: (line: string) => void;
}

/** What {@link checkPackedExamples} found. */
export interface PackedCheckResult {
  readonly checked: number;
  readonly failures: readonly Failure[];
  /** A line saying what was checked with what, and how long it took. */
  readonly summary: string;
}

interface Manifest {
  readonly name: string;
  readonly version: string;
  readonly private?: boolean;
  readonly dependencies?: Readonly<Record<string, string>>;
  readonly devDependencies?: Readonly<Record<string, string>>;
}

interface Example {
  readonly folder: string;
  readonly readme: string;
  readonly block: Block;
  readonly plan: RunPlan;
}

/** Runs a command; rejects with its output when it fails. */
function run(command: string, args: readonly string[], cwd: string): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(command, [...args], { cwd, maxBuffer: 64 * 1024 * 1024 }, (error, stdout, stderr) => {
      if (error === null) resolve(stdout);
      else reject(new Error(`${command} ${args.join(" ")} failed:\n${stdout}${stderr}`.trimEnd()));
    });
  });
}

function readManifest(dir: string): Manifest {
  return JSON.parse(readFileSync(join(dir, "package.json"), "utf8")) as Manifest;
}

/** The workspace's published packages by name, each with its folder. */
function publishedPackages(root: string): Map<string, { dir: string; manifest: Manifest }> {
  const packages = new Map<string, { dir: string; manifest: Manifest }>();
  for (const folder of readManifestFolders(root)) {
    const manifest = readManifest(folder);
    if (manifest.private !== true) packages.set(manifest.name, { dir: folder, manifest });
  }
  return packages;
}

function readManifestFolders(root: string): string[] {
  const parent = join(root, "packages");
  return (existsSync(parent) ? readdirSync(parent).sort() : [])
    .map((name) => join(parent, name))
    .filter((dir) => existsSync(join(dir, "package.json")));
}

/** Every `@telepace/*` package the names need, with the workspace packages those depend on. */
function withDependencies(
  names: Iterable<string>,
  packages: ReadonlyMap<string, { manifest: Manifest }>,
): string[] {
  const needed = new Set<string>();
  const visit = (name: string): void => {
    const entry = packages.get(name);
    if (entry === undefined || needed.has(name)) return;
    needed.add(name);
    for (const dependency of Object.keys(entry.manifest.dependencies ?? {})) visit(dependency);
  };
  for (const name of names) visit(name);
  return [...needed].sort();
}

/** The import specifiers of a module's source (static imports and re-exports). */
export function importsOf(code: string): string[] {
  const specifiers = new Set<string>();
  for (const match of code.matchAll(/^\s*(?:import|export)\b[^'"]*?\bfrom\s*["']([^"']+)["']/gm)) {
    specifiers.add(match[1] as string);
  }
  for (const match of code.matchAll(/^\s*import\s*["']([^"']+)["']/gm)) {
    specifiers.add(match[1] as string);
  }
  return [...specifiers];
}

/** The examples to check, or the failures that keep a README's first example from being one. */
function collectExamples(
  root: string,
  readmes: readonly string[],
  packages: ReadonlyMap<string, { dir: string }>,
): { examples: Example[]; failures: Failure[] } {
  const examples: Example[] = [];
  const failures: Failure[] = [];
  const published = new Set([...packages.values()].map(({ dir }) => dir));
  for (const readme of readmes) {
    const dir = dirname(readme);
    if (!published.has(dir)) continue;
    const folder = basename(dir);
    const location = relative(root, readme);
    const block = firstUsageExample(readme);
    const plan = runPlans[folder];
    const fail = (line: number, message: string) =>
      failures.push({ location: `${location}:${line}`, message });
    if (block === undefined) {
      fail(1, "has no ```ts block under ## Usage to show first");
      continue;
    }
    if (block.prelude !== "") {
      fail(block.line, "the first example relies on hidden declarations (a prelude)");
      continue;
    }
    if (plan === undefined) {
      fail(block.line, `the first example has no run plan in scripts/example-runs.ts`);
      continue;
    }
    const installed = new Set(installSpecs(readme).map(packageNameOf));
    const missing = importsOf(block.code)
      .filter((specifier) => !specifier.startsWith("node:"))
      .map(packageNameOf)
      .filter((name) => !installed.has(name));
    if (missing.length > 0) {
      fail(block.line, `imports ${missing.join(", ")}, which the Install section does not install`);
      continue;
    }
    examples.push({ folder, readme, block, plan });
  }
  return { examples, failures };
}

/** The fresh project's package.json: the tarballs, the README's public packages, TypeScript. */
function projectManifest(
  root: string,
  tarballs: ReadonlyMap<string, string>,
  publicSpecs: readonly string[],
): object {
  const rootManifest = readManifest(root);
  const pinned = (name: string): string => {
    const version = rootManifest.devDependencies?.[name];
    if (version === undefined) throw new Error(`the root package.json pins no ${name}`);
    return version;
  };
  const telepace = Object.fromEntries(
    [...tarballs].map(([name, file]) => [name, `file:tarballs/${file}`]),
  );
  // A package two READMEs install at two versions is an error; one without a version takes latest.
  const others: Record<string, string> = {};
  for (const spec of publicSpecs) {
    const name = packageNameOf(spec);
    const version = spec.slice(name.length + 1) || "latest";
    const known = others[name];
    if (known !== undefined && known !== "latest" && version !== "latest" && known !== version) {
      throw new Error(`the READMEs install ${name} at ${known} and at ${version}`);
    }
    if (known === undefined || known === "latest") others[name] = version;
  }
  return {
    name: "telepace-readme-examples",
    private: true,
    type: "module",
    dependencies: { ...others, ...telepace },
    devDependencies: { typescript: pinned("typescript"), "@types/node": pinned("@types/node") },
    // A dependency of one tarball on another resolves to the tarball, never to the registry.
    overrides: telepace,
  };
}

/** tsc's `examples/<folder>.ts(line,column): error …` lines, mapped to README lines. */
function compileFailures(output: string, examples: readonly Example[], root: string): Failure[] {
  const failures: Failure[] = [];
  for (const line of output.split("\n")) {
    if (line.trim() === "") continue;
    const match = /^examples\/([\w-]+)\.ts\((\d+),(\d+)\): (.*)$/.exec(line);
    const example = examples.find(({ folder }) => folder === match?.[1]);
    if (match === null || example === undefined) {
      // An error in a package's own .d.ts, or a continuation line of the previous error.
      if (!/^\s/.test(line)) failures.push({ location: "packed project", message: line });
      continue;
    }
    const readmeLine = example.block.line + Number(match[2]) - 1;
    failures.push({
      location: `${relative(root, example.readme)}:${readmeLine}:${match[3]}`,
      message: `${match[4]} (tsc --strict --module nodenext, outside the workspace)`,
    });
  }
  return failures;
}

/** Packs, installs, compiles and runs the first examples of the selected published packages. */
export async function checkPackedExamples(options: PackedCheckOptions): Promise<PackedCheckResult> {
  const { root, log } = options;
  const startedAt = performance.now();
  const phases: string[] = [];
  let phaseStart = startedAt;
  const phase = (name: string): void => {
    const now = performance.now();
    phases.push(`${name} ${((now - phaseStart) / 1000).toFixed(1)} s`);
    phaseStart = now;
  };
  const packages = publishedPackages(root);
  const { examples, failures } = collectExamples(root, options.readmes, packages);
  if (examples.length === 0)
    return { checked: 0, failures, summary: "packed check: nothing to check" };

  // The packages the READMEs install, what they depend on, and the simulator the runs play on.
  const specs = examples.flatMap(({ readme }) => installSpecs(readme));
  const telepace = withDependencies(
    [...specs.map(packageNameOf), "@telepace/bot-api-sim"].filter((name) => packages.has(name)),
    packages,
  );
  const publicSpecs = specs.filter((spec) => !packages.has(packageNameOf(spec)));
  await run(
    "pnpm",
    [
      "exec",
      "turbo",
      "run",
      "build",
      "--output-logs=errors-only",
      ...telepace.map((name) => `--filter=${name}`),
    ],
    root,
  );
  phase("build");

  const project = mkdtempSync(join(tmpdir(), "telepace-readme-examples-"));
  try {
    const tarballDir = join(project, "tarballs");
    mkdirSync(tarballDir);
    const tarballs = new Map<string, string>();
    for (const name of telepace) {
      const { dir, manifest } = packages.get(name) as { dir: string; manifest: Manifest };
      await run("pnpm", ["pack", "--pack-destination", tarballDir], dir);
      const file = `${name.slice(1).replace("/", "-")}-${manifest.version}.tgz`;
      const listing = await run("tar", ["-tzf", join(tarballDir, file)], project);
      for (const required of ["package.json", "README.md", "LICENSE", "CHANGELOG.md"]) {
        if (!listing.split("\n").includes(`package/${required}`)) {
          failures.push({
            location: relative(root, join(dir, "package.json")),
            message: `the packed ${file} has no ${required}`,
          });
        }
      }
      tarballs.set(name, file);
    }
    phase("pack");
    writeFileSync(
      join(project, "package.json"),
      `${JSON.stringify(projectManifest(root, tarballs, publicSpecs), null, 2)}\n`,
    );
    await run("npm", ["install", "--no-audit", "--no-fund", "--loglevel=error"], project);
    phase("npm install");

    mkdirSync(join(project, "examples"));
    for (const example of examples) {
      writeFileSync(join(project, "examples", `${example.folder}.ts`), `${example.block.code}\n`);
    }
    const tsc = join(project, "node_modules", "typescript", "bin", "tsc");
    const files = examples.map(({ folder }) => `examples/${folder}.ts`);
    const compiled = await run(
      process.execPath,
      [tsc, "--strict", "--module", "nodenext", "--outDir", "out", ...files],
      project,
    ).then(
      () => [] as Failure[],
      (error: Error) =>
        compileFailures(error.message.split("\n").slice(1).join("\n"), examples, root),
    );
    failures.push(...compiled);
    phase("tsc");

    const simModule = join(project, "node_modules", "@telepace", "bot-api-sim", "dist", "index.js");
    const { start } = (await import(pathToFileURL(simModule).href)) as {
      start: () => Promise<Sim>;
    };
    const versions: string[] = [];
    for (const node of options.nodes) {
      const version = (await run(node, ["--version"], project)).trim();
      versions.push(version);
      for (const example of examples) {
        const location = relative(root, example.readme);
        if (compiled.some((failure) => failure.location.startsWith(`${location}:`))) continue;
        const script = join(project, "out", `${example.folder}.js`);
        const problem = await runExample(node, script, example.plan, start);
        if (problem !== undefined) {
          failures.push({
            location: `${location}:${example.block.line}`,
            message: `the compiled first example, run with Node ${version}, ${problem}`,
          });
        }
      }
    }
    phase("runs");
    log(`packed check: ${phases.join(", ")}`);
    const seconds = ((performance.now() - startedAt) / 1000).toFixed(0);
    const summary =
      `${examples.length} first examples packed, installed with npm, compiled with a plain strict tsc ` +
      `and run with Node ${versions.join(" and ")} in ${seconds} s`;
    return { checked: examples.length, failures, summary };
  } finally {
    if (options.keep === true) log(`packed check: the project is kept in ${project}`);
    else rmSync(project, { recursive: true, force: true });
  }
}
