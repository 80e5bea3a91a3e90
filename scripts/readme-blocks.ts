// The ```ts blocks of a README and the HTML comment directive before each, as the example
// checks read them (scripts/check-readme-examples.ts in the workspace, packed-examples.ts outside
// it), plus the two sections those checks care about: the first example under `## Usage` and the
// packages the `## Install` section tells a reader to install.

import { readFileSync } from "node:fs";

export interface Block {
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

export interface Failure {
  /** `path/README.md:line` (repo-relative) of the failing line. */
  readonly location: string;
  readonly message: string;
}

/** The lines of one `## <title>` section of a README, with the 0-based index of its heading. */
function section(readme: string, title: string): { lines: string[]; heading: number } | undefined {
  const lines = readFileSync(readme, "utf8").split("\n");
  const heading = lines.findIndex((line) => line.trim() === `## ${title}`);
  if (heading < 0) return undefined;
  const next = lines.findIndex((line, index) => index > heading && /^## /.test(line));
  return { lines: lines.slice(0, next < 0 ? lines.length : next), heading };
}

/** The README's first example: its first ```ts block under `## Usage`, if there is one. */
export function firstUsageExample(readme: string): Block | undefined {
  const usage = section(readme, "Usage");
  if (usage === undefined) return undefined;
  // `line` is 1-based: a block of the section starts after the heading and before the next one.
  return extractBlocks(readme).find(
    (block) => block.line > usage.heading + 1 && block.line <= usage.lines.length,
  );
}

/**
 * What the `## Install` section tells a reader to install with npm: the arguments of its
 * `npm i …` / `npm install …` lines that are not flags, as written (`grammy`, `name@1.2.3`).
 */
export function installSpecs(readme: string): string[] {
  const install = section(readme, "Install");
  if (install === undefined) return [];
  const specs: string[] = [];
  for (const line of install.lines.slice(install.heading)) {
    const command = /^\s*npm (?:i|install)\s+(.*)$/.exec(line);
    if (command === null) continue;
    const words = (command[1] ?? "").split("#")[0]?.trim().split(/\s+/) ?? [];
    specs.push(...words.filter((word) => word !== "" && !word.startsWith("-")));
  }
  return specs;
}

/** The package a spec or an import specifier names: `@scope/name` or `name`, without version or path. */
export function packageNameOf(specifier: string): string {
  const parts = specifier.split("/");
  const name = specifier.startsWith("@") ? `${parts[0]}/${parts[1] ?? ""}` : (parts[0] ?? "");
  const at = name.indexOf("@", 1);
  return at < 0 ? name : name.slice(0, at);
}
