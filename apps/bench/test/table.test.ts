import { describe, expect, it } from "vitest";
import { renderTable } from "../src/table.js";

describe("renderTable", () => {
  it("aligns text left and figures right under a rule, with notes below", () => {
    const text = renderTable({
      title: "T",
      columns: [{ header: "name", align: "left" }, { header: "x" }],
      rows: [
        ["telepace", "1.00×"],
        ["peer", "12.4×"],
      ],
      notes: ["ratios are row ÷ telepace"],
    });
    expect(text.split("\n")).toEqual([
      "T",
      "name          x",
      "--------  -----",
      "telepace  1.00×",
      "peer      12.4×",
      "  ratios are row ÷ telepace",
    ]);
  });

  it("refuses a row with the wrong number of cells", () => {
    expect(() =>
      renderTable({ title: "T", columns: [{ header: "a" }, { header: "b" }], rows: [["1"]] }),
    ).toThrow('Expected 2 cells in each row of "T", got 1');
  });
});
