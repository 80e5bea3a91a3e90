// The layout of `--help`: each section a title and rows of a name and its description, every
// description starting in the same column in every section, continuation lines under it.

/** A row of the help: a flag or variable name, then one or more lines describing it. */
export type HelpRow = readonly [name: string, description: string, ...more: string[]];

/** Where every description starts: after the longest name (`TELEPACE_METRICS_PORT`) and two spaces. */
const DESCRIPTION_COLUMN = 25;
const INDENT = "  ";

/** A titled section of rows, aligned on {@link DESCRIPTION_COLUMN}. */
export function helpSection(title: string, rows: readonly HelpRow[]): string {
  const width = DESCRIPTION_COLUMN - INDENT.length;
  const lines = [title];
  for (const [name, ...description] of rows) {
    if (name.length > width - 2) throw new Error(`help: the name ${name} is too long to align`);
    const [first = "", ...rest] = description;
    lines.push(`${INDENT}${name.padEnd(width)}${first}`);
    for (const line of rest) lines.push(`${" ".repeat(DESCRIPTION_COLUMN)}${line}`);
  }
  return lines.join("\n");
}
