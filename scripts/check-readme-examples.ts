// Type-checks every ```ts block of the READMEs under the repo's strict settings, so a usage
// example cannot drift from the API it shows.
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

import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const outDirName = ".examples";

interface Block {
  readonly readme: string;
  /** 1-based README line of the first code line (the one after the fence). */
  readonly line: number;
  readonly code: string;
  readonly prelude: string;
  /** 1-based README line of the prelude's first line (`prelude` lines before the fence). */
  readonly preludeLine: number;
  readonly directive: "check" | "fragment" | "file";
  readonly file?: string;
}

const directivePattern = /^<!--\s*example:\s*(fragment|file|prelude)\b([\s\S]*?)-->\s*$/;

/** The ```ts blocks of one README, with the directive each one carries. */
export function extractBlocks(readme: string): Block[] {
  const lines = readFileSync(readme, "utf8").split("\n");
  const blocks: Block[] = [];
  for (let index = 0; index < lines.length; index++) {
    const fence = /^(\s*)(`{3,})\s*(ts|typescript)\s*$/.exec(lines[index] ?? "");
    if (fence === null) continue;
    const [, indent = "", ticks = "```"] = fence;
    const start = index + 1;
    let end = start;
    while (end < lines.length && (lines[end] ?? "").trim() !== ticks) end++;
    const code = lines
      .slice(start, end)
      .map((line) => (line.startsWith(indent) ? line.slice(indent.length) : line))
      .join("\n");
    const comment = precedingComment(lines, index);
    const match = comment === undefined ? null : directivePattern.exec(comment.text);
    const kind = match?.[1];
    const argument = match?.[2] ?? "";
    // `<!-- example: prelude` may carry code on its own line too; keep lines where they are.
    const preludeLines = argument.split("\n");
    const skipFirst = preludeLines[0]?.trim() === "";
    const prelude = kind === "prelude" ? preludeLines.slice(skipFirst ? 1 : 0) : [];
    while (prelude.length > 0 && prelude.at(-1)?.trim() === "") prelude.pop();
    blocks.push({
      readme,
      line: start + 1,
      code,
      prelude: prelude.length === 0 ? "" : `${prelude.join("\n")}\n`,
      preludeLine: (comment?.line ?? 0) + 1 + (skipFirst ? 1 : 0),
      directive: kind === "fragment" ? "fragment" : kind === "file" ? "file" : "check",
      ...(kind === "file" ? { file: argument.trim() } : {}),
    });
    index = end;
  }
  return blocks;
}

/** The HTML comment that ends on the last non-blank line before `fence`, if any. */
function precedingComment(
  lines: readonly string[],
  fence: number,
): { text: string; line: number } | undefined {
  let last = fence - 1;
  while (last >= 0 && (lines[last] ?? "").trim() === "") last--;
  if (!(lines[last] ?? "").trimEnd().endsWith("-->")) return undefined;
  let first = last;
  while (first >= 0 && !(lines[first] ?? "").includes("<!--")) first--;
  if (first < 0) return undefined;
  return {
    text: lines
      .slice(first, last + 1)
      .join("\n")
      .trim(),
    line: first,
  };
}

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

export interface Failure {
  /** `path/README.md:line` (repo-relative) of the failing line. */
  readonly location: string;
  readonly message: string;
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

if (process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const args = process.argv.slice(2);
  if (args.includes("--help")) {
    console.log("usage: check-readme-examples [README.md | folder]... [--only name,name]");
    console.log("       (no arguments: the root README and those of packages/* and apps/*)");
    process.exit(0);
  }
  let readmes: string[];
  try {
    readmes = resolveReadmes(args);
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
  process.exitCode = failures.length === 0 ? 0 : 1;
}
