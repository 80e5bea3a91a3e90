// Type-checks every ```ts block of the READMEs under the repo's strict settings, so a usage
// example cannot drift from the API it shows; with --packed, also runs each first example.
//
//   pnpm check:examples                      every README (root, packages/*, apps/*)
//   pnpm check:examples packages/core …      only these packages, folders or README files
//   pnpm check:examples --only core,grammy   the same, by package or app folder name
//
// Each block becomes a module in `.examples/` next to its README (git-ignored), so its imports
// resolve like the package's own code: `@telepace/*` to source through the `@telepace/source`
// condition, other packages from that package's node_modules. An HTML comment on the line
// before the fence changes how a block is checked:
//
//   <!-- example: fragment -->             not checked (a fragment that cannot stand alone)
//   <!-- example: file examples/bot.ts --> must equal that file (relative to the README)
//   <!-- example: prelude                  code put before the block, unseen by readers: the
//   declare const transfer: MediaTransfer;   imports and `declare`s for what the block assumes
//   -->
//
// With `--packed` (what `pnpm check:examples` passes) the first example of each published
// package's README is then checked as a user meets it, outside the workspace (packed-examples.ts):
// no prelude allowed, compiled by a plain strict tsc against the packed tarballs and run with this
// Node and each `--node <path>` given (CI passes Node 24). `--keep` keeps that project.

import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";
import { checkPackedExamples } from "./packed-examples.js";
import { type Block, extractBlocks, type Failure } from "./readme-blocks.js";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const outDirName = ".examples";

/** READMEs named by the arguments: README files, folders holding one, or (with --only) names. */
export function resolveReadmes(args: readonly string[]): string[] {
  const folders = (parent: string) =>
    existsSync(join(root, parent))
      ? readdirSync(join(root, parent), { withFileTypes: true })
          .filter((entry) => entry.isDirectory())
          .map((entry) => join(root, parent, entry.name))
      : [];
  const all = [root, ...folders("packages"), ...folders("apps")];
  const selected: string[] = [];
  for (let index = 0; index < args.length; index++) {
    const arg = args[index] ?? "";
    if (arg === "--only") {
      const names = (args[++index] ?? "").split(",").filter((name) => name !== "");
      for (const name of names) {
        const folder = all.find((path) => path !== root && path.endsWith(`/${name}`));
        if (folder === undefined) throw new Error(`--only: no package or app named ${name}`);
        selected.push(folder);
      }
    } else {
      selected.push(resolve(arg));
    }
  }
  const readmes = (args.length === 0 ? all : selected).map((path) =>
    path.endsWith(".md") ? path : join(path, "README.md"),
  );
  const missing = args.length === 0 ? undefined : readmes.find((path) => !existsSync(path));
  if (missing !== undefined) throw new Error(`${relative(root, missing)} does not exist`);
  return readmes.filter((path, index) => existsSync(path) && readmes.indexOf(path) === index);
}

export interface CheckResult {
  readonly checked: number;
  readonly skipped: number;
  readonly failures: readonly Failure[];
}

/** Writes each block of `readmes` as a module and type-checks them all in one program. */
export function checkReadmes(readmes: readonly string[]): CheckResult {
  const failures: Failure[] = [];
  const modules = new Map<string, Block>();
  let skipped = 0;
  for (const readme of readmes) {
    const outDir = join(dirname(readme), outDirName);
    // Only this checker's modules: tests may keep other files here.
    for (const name of existsSync(outDir) ? readdirSync(outDir) : []) {
      if (/^README\.md-\d+\.ts$/.test(name)) rmSync(join(outDir, name));
    }
    for (const block of extractBlocks(readme)) {
      if (block.directive === "fragment") {
        skipped++;
        continue;
      }
      if (block.file !== undefined) {
        const path = join(dirname(readme), block.file);
        const file = existsSync(path) ? readFileSync(path, "utf8") : undefined;
        if (file?.trimEnd() !== block.code.trimEnd()) {
          failures.push({
            location: `${relative(root, readme)}:${block.line}`,
            message:
              file === undefined
                ? `${block.file} does not exist`
                : `differs from ${block.file}; copy the file into the README`,
          });
        }
      }
      mkdirSync(outDir, { recursive: true });
      const module = join(outDir, `README.md-${block.line}.ts`);
      // `export {}` makes a block without imports a module too (top-level await, own scope).
      writeFileSync(module, `${block.prelude}${block.code}\nexport {};\n`);
      modules.set(module, block);
    }
  }
  if (modules.size > 0) failures.push(...typeCheck(modules));
  const order = (failure: Failure) => failure.location.split(":");
  failures.sort((a, b) => {
    const [fileA = "", lineA = "0"] = order(a);
    const [fileB = "", lineB = "0"] = order(b);
    return fileA.localeCompare(fileB) || Number(lineA) - Number(lineB);
  });
  return { checked: modules.size, skipped, failures };
}

function typeCheck(modules: ReadonlyMap<string, Block>): Failure[] {
  const configPath = join(root, "tsconfig.base.json");
  const config = ts.readConfigFile(configPath, ts.sys.readFile);
  const parsed = ts.parseJsonConfigFileContent(config.config, ts.sys, root, { noEmit: true });
  const program = ts.createProgram([...modules.keys()], { ...parsed.options, noEmit: true });
  const failures: Failure[] = [];
  for (const diagnostic of ts.getPreEmitDiagnostics(program)) {
    const message = ts.flattenDiagnosticMessageText(diagnostic.messageText, "\n");
    const file = diagnostic.file;
    const block = file === undefined ? undefined : modules.get(resolve(file.fileName));
    if (file === undefined || diagnostic.start === undefined) {
      failures.push({
        location: "tsconfig.base.json",
        message: `TS${diagnostic.code}: ${message}`,
      });
      continue;
    }
    // Errors inside the packages' own sources are `pnpm typecheck`'s to report.
    if (block === undefined) continue;
    const { line, character } = file.getLineAndCharacterOfPosition(diagnostic.start);
    const preludeLines = block.prelude === "" ? 0 : block.prelude.split("\n").length - 1;
    const readmeLine =
      line < preludeLines ? block.preludeLine + line : block.line + line - preludeLines;
    failures.push({
      location: `${relative(root, block.readme)}:${readmeLine}:${character + 1}`,
      message: `TS${diagnostic.code}: ${message}${line < preludeLines ? " (in the prelude)" : ""}`,
    });
  }
  return failures;
}

/** The command line: `--packed` and `--node <path>` (repeatable) besides the README selection. */
function parseFlags(argv: readonly string[]): {
  selection: string[];
  packed: boolean;
  nodes: string[];
  keep: boolean;
} {
  const selection: string[] = [];
  const nodes = [process.execPath];
  let packed = false;
  let keep = false;
  for (let index = 0; index < argv.length; index++) {
    const arg = argv[index] ?? "";
    if (arg === "--packed") packed = true;
    else if (arg === "--keep") keep = true;
    else if (arg === "--node") {
      const node = argv[++index];
      if (node === undefined || !existsSync(node))
        throw new Error(`--node: no Node binary at ${node}`);
      nodes.push(resolve(node));
    } else selection.push(arg);
  }
  return { selection, packed, nodes, keep };
}

if (process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const args = process.argv.slice(2);
  if (args.includes("--help")) {
    console.log(
      "usage: check-readme-examples [README.md | folder]... [--only name,name] [--packed [--node path]...]",
    );
    console.log("       (no arguments: the root README and those of packages/* and apps/*)");
    console.log("       --packed: also pack the packages and compile and run each first example");
    console.log("                 in a fresh npm project (--node: run them with this Node too)");
    process.exit(0);
  }
  let readmes: string[];
  let flags: ReturnType<typeof parseFlags>;
  try {
    flags = parseFlags(args);
    readmes = resolveReadmes(flags.selection);
  } catch (error) {
    console.error(`check-readme-examples: ${(error as Error).message}`);
    process.exit(2);
  }
  const { checked, skipped, failures } = checkReadmes(readmes);
  for (const failure of failures) console.error(`${failure.location}: ${failure.message}`);
  console.log(
    `${readmes.length} READMEs, ${checked} blocks checked, ${skipped} fragments skipped, ` +
      `${failures.length} errors`,
  );
  let failed = failures.length;
  if (flags.packed) {
    const packed = await checkPackedExamples({
      root,
      readmes,
      nodes: flags.nodes,
      keep: flags.keep,
      log: (line) => console.log(line),
    });
    for (const failure of packed.failures) console.error(`${failure.location}: ${failure.message}`);
    console.log(`${packed.summary}, ${packed.failures.length} errors`);
    failed += packed.failures.length;
  }
  process.exitCode = failed === 0 ? 0 : 1;
}
