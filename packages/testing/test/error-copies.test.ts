import { describe, expect, it } from "vitest";
import { instanceofAcrossCopies } from "../src/index.js";

/** Two copies of a module of error classes, unbranded: `instanceof` fails across them. */
function copies() {
  const make = () => {
    class BaseError extends Error {
      readonly code = "ERR_X";
    }
    class LeafError extends BaseError {}
    return { BaseError, LeafError };
  };
  return [make(), make()] as const;
}

describe("instanceofAcrossCopies", () => {
  it("names each class whose answer differs between the copies", () => {
    const [own, other] = copies();
    const leaf = new own.LeafError();
    expect(instanceofAcrossCopies(own, other, [leaf])).toEqual([
      { error: "LeafError", class: "BaseError", ownCopy: true, otherCopy: false },
      { error: "LeafError", class: "LeafError", ownCopy: true, otherCopy: false },
    ]);
  });

  it("refuses one copy twice, and an error that is not of the first copy", () => {
    const [own, other] = copies();
    expect(() => instanceofAcrossCopies(own, own, [new own.BaseError()])).toThrow(/two copies/);
    expect(() => instanceofAcrossCopies(own, other, [new other.BaseError()])).toThrow(
      /not a class of the first copy/,
    );
  });
});
