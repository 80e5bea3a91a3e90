import { describe, expect, it } from "vitest";
import { parseBenchArguments } from "../src/scope.js";

const AREAS = ["writes", "dispatch"];

describe("parseBenchArguments", () => {
  it("runs the headline rows of the named areas, each once, or of none named", () => {
    expect(parseBenchArguments([], AREAS)).toEqual({ areas: [], scope: "headline" });
    expect(parseBenchArguments(["dispatch", "writes", "dispatch"], AREAS)).toEqual({
      areas: ["dispatch", "writes"],
      scope: "headline",
    });
  });

  it("runs every row with --full, wherever it stands", () => {
    expect(parseBenchArguments(["--full"], AREAS)).toEqual({ areas: [], scope: "full" });
    expect(parseBenchArguments(["writes", "--full"], AREAS)).toEqual({
      areas: ["writes"],
      scope: "full",
    });
  });

  it("names an unknown area or option and what it expected", () => {
    expect(() => parseBenchArguments(["dispatsh"], AREAS)).toThrow(
      'Unknown area "dispatsh"; expected any of writes, dispatch',
    );
    expect(() => parseBenchArguments(["--fast"], AREAS)).toThrow('Unknown option "--fast"');
  });
});
