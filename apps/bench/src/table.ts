// Plain-text tables for the terminal: a title, aligned columns and notes under the table.

/** One column of a {@link Table}. */
export interface Column {
  readonly header: string;
  /** Text columns align left, figures right. @defaultValue "right" */
  readonly align?: "left" | "right";
}

/** A table as printed by {@link renderTable}. */
export interface Table {
  readonly title: string;
  readonly columns: readonly Column[];
  /** One cell per column in each row. */
  readonly rows: readonly (readonly string[])[];
  /** Lines printed under the table (what the ratios are relative to, units, caveats). */
  readonly notes?: readonly string[];
}

function pad(text: string, width: number, align: "left" | "right"): string {
  return align === "left" ? text.padEnd(width) : text.padStart(width);
}

/** Renders a table with a rule under the header; throws when a row has the wrong cell count. */
export function renderTable(table: Table): string {
  const widths = table.columns.map((column) => column.header.length);
  for (const row of table.rows) {
    if (row.length !== table.columns.length) {
      throw new RangeError(
        `Expected ${table.columns.length} cells in each row of "${table.title}", got ${row.length}`,
      );
    }
    row.forEach((cell, index) => {
      widths[index] = Math.max(widths[index] as number, cell.length);
    });
  }
  const line = (cells: readonly string[]): string =>
    cells
      .map((cell, index) =>
        pad(cell, widths[index] as number, table.columns[index]?.align ?? "right"),
      )
      .join("  ")
      .trimEnd();
  const out = [
    table.title,
    line(table.columns.map((column) => column.header)),
    widths.map((width) => "-".repeat(width)).join("  "),
    ...table.rows.map(line),
  ];
  for (const note of table.notes ?? []) out.push(`  ${note}`);
  return out.join("\n");
}
