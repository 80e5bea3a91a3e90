import { describe, expect, it } from "vitest";
import { roundSummary, runRounds } from "../src/rounds.js";

const contenders = ["a", "b", "c", "d"].map((id) => ({ id }));

describe("runRounds", () => {
  it("runs every contender once per round, on the round's seed, in the order it records", async () => {
    const ran: string[] = [];
    const rounds = await runRounds(
      contenders,
      { rounds: 5, seed: 40 },
      async (contender, round) => {
        ran.push(contender.id);
        return `${contender.id}@${round.seed}`;
      },
    );
    expect(rounds.rounds.map((round) => round.seed)).toEqual([40, 41, 42, 43, 44]);
    expect(ran).toEqual(rounds.rounds.flatMap((round) => round.order));
    for (const round of rounds.rounds)
      expect([...round.order].sort()).toEqual(["a", "b", "c", "d"]);
    expect(rounds.get(3, "c")).toBe("c@43");
    expect(rounds.of("b")).toEqual(["b@40", "b@41", "b@42", "b@43", "b@44"]);
  });

  it("shuffles by its seed: the same seed gives the same orders, and not one fixed order", async () => {
    const orders = async (seed: number) =>
      (await runRounds(contenders, { rounds: 6, seed }, async () => 0)).rounds.map((round) =>
        round.order.join(""),
      );
    expect(await orders(3)).toEqual(await orders(3));
    expect(new Set(await orders(3)).size).toBeGreaterThan(1);
    expect(await orders(3)).not.toEqual(await orders(4));
  });

  it("rotates on request, so each contender goes first equally often", async () => {
    const rounds = await runRounds(
      contenders,
      { rounds: 8, seed: 1, order: "rotate" },
      async () => 0,
    );
    expect(rounds.rounds.map((round) => round.order.join(""))).toEqual([
      "abcd",
      "bcda",
      "cdab",
      "dabc",
      "abcd",
      "bcda",
      "cdab",
      "dabc",
    ]);
  });

  it("computes a figure per round from that round's results only", async () => {
    const rounds = await runRounds(contenders, { rounds: 3, seed: 9 }, async (contender, round) =>
      contender.id === "a" ? 10 * (round.index + 1) : round.index + 1,
    );
    expect(rounds.perRound((result) => result("a") / result("b"))).toEqual([10, 10, 10]);
    expect(() => rounds.get(0, "z")).toThrow("No result of `z` in round 0");
  });

  it("serialises to every round's seed and order and each contender's results", async () => {
    const rounds = await runRounds(
      contenders.slice(0, 2),
      { rounds: 2, seed: 5, order: "rotate" },
      async (contender, round) => ({ id: contender.id, round: round.index }),
    );
    expect(JSON.parse(JSON.stringify({ area: rounds }))).toEqual({
      area: {
        rounds: [
          { index: 0, seed: 5, order: ["a", "b"] },
          { index: 1, seed: 6, order: ["b", "a"] },
        ],
        results: {
          a: [
            { id: "a", round: 0 },
            { id: "a", round: 1 },
          ],
          b: [
            { id: "b", round: 0 },
            { id: "b", round: 1 },
          ],
        },
      },
    });
  });

  it("rejects a round count below 1, a fractional seed and repeated ids", async () => {
    const run = async () => 0;
    await expect(runRounds(contenders, { rounds: 0, seed: 1 }, run)).rejects.toThrow(
      "Expected `rounds` to be an integer >= 1, got 0",
    );
    await expect(runRounds(contenders, { rounds: 1, seed: 0.5 }, run)).rejects.toThrow(
      "Expected `seed` to be an integer, got 0.5",
    );
    await expect(
      runRounds([{ id: "a" }, { id: "a" }], { rounds: 1, seed: 1 }, run),
    ).rejects.toThrow("Expected distinct contender ids, got a, a");
  });
});

describe("roundSummary", () => {
  it("puts each figure's median under its name with its min and max beside it", () => {
    const summary = roundSummary(5, {
      ratio: [0.4, 0.2, 0.5, 0.3, 0.1],
      count: [3, 3, 3, 3, 3],
    });
    expect(summary).toEqual({
      rounds: 5,
      ratio: 0.3,
      ratioMin: 0.1,
      ratioMax: 0.5,
      count: 3,
      countMin: 3,
      countMax: 3,
    });
    expect(Object.keys(summary)).toEqual([
      "rounds",
      "ratio",
      "ratioMin",
      "ratioMax",
      "count",
      "countMin",
      "countMax",
    ]);
  });

  it("refuses figures with a value missing for a round, and keeps an undefined round undefined", () => {
    expect(() => roundSummary(3, { ratio: [1, 2] })).toThrow("Expected 3 values of `ratio`, got 2");
    expect(roundSummary(2, { ratio: [1, Number.NaN] }).ratio).toBeNaN();
  });
});
