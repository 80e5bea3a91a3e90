// Rounds for every area: each round runs every contender once, in an order of its own (seeded
// shuffle or rotation) and on that round's workload seed, so drift in the machine's speed and
// warm-up land on every contender alike; figures are then reduced to medians with their range.

import { seededRandom } from "./random.js";
import { spread } from "./stats.js";

/** How {@link runRounds} repeats and orders the contenders. */
export interface RoundsOptions {
  /** Rounds to run, integer >= 1 (the bench runs at least 5). */
  readonly rounds: number;
  /** Seed of the orders and of each round's workload seed, an integer. */
  readonly seed: number;
  /**
   * `"shuffle"`: a seeded random order each round. `"rotate"`: round r starts with contender
   * r mod n and keeps the list's order, so each one goes first equally often.
   * @defaultValue "shuffle"
   */
  readonly order?: "shuffle" | "rotate";
}

/** One round, as it ran. */
export interface Round {
  /** 0-based. */
  readonly index: number;
  /** The round's workload seed: the same for every contender of the round. */
  readonly seed: number;
  /** Contender ids in the order they ran. */
  readonly order: readonly string[];
}

/** A {@link Rounds} as the JSON file keeps it: every round's seed and order, every result. */
export interface RoundsJson<R> {
  readonly rounds: readonly Round[];
  /** Each contender's results in round order. */
  readonly results: Readonly<Record<string, readonly R[]>>;
}

/** What {@link runRounds} measured. */
export interface Rounds<R> {
  readonly rounds: readonly Round[];
  /** One contender's result in one round. */
  get(round: number, id: string): R;
  /** Every round's result of one contender, in round order. */
  of(id: string): R[];
  /**
   * One figure per round, computed from that round's results only (`result(id)`), so a ratio
   * pairs contenders that ran under the same conditions.
   */
  perRound(figure: (result: (id: string) => R, round: Round) => number): number[];
  /** `JSON.stringify` writes this: an area can put its `Rounds` in its figures as they are. */
  toJSON(): RoundsJson<R>;
}

/**
 * Runs every contender once per round, one at a time, in each round's order.
 * @example
 * const rounds = await runRounds(contenders, { rounds: 5, seed: 7 }, (contender, round) =>
 *   simulate(contender, workload(round.seed)),
 * );
 * const p99Ratio = rounds.perRound((result) => result("telepace").p99 / result("peer").p99);
 */
export async function runRounds<C extends { readonly id: string }, R>(
  contenders: readonly C[],
  options: RoundsOptions,
  run: (contender: C, round: Round) => Promise<R>,
): Promise<Rounds<R>> {
  const { rounds: count, seed } = options;
  if (!(Number.isInteger(count) && count >= 1)) {
    throw new RangeError(`Expected \`rounds\` to be an integer >= 1, got ${String(count)}`);
  }
  if (!Number.isInteger(seed)) {
    throw new RangeError(`Expected \`seed\` to be an integer, got ${String(seed)}`);
  }
  const ids = contenders.map((contender) => contender.id);
  if (new Set(ids).size !== ids.length) {
    throw new RangeError(`Expected distinct contender ids, got ${ids.join(", ")}`);
  }
  const random = seededRandom(seed);
  const rounds: Round[] = [];
  const results: Map<string, R>[] = [];
  for (let index = 0; index < count; index++) {
    const ordered =
      options.order === "rotate" ? rotate(contenders, index) : shuffle(contenders, random);
    const round: Round = { index, seed: seed + index, order: ordered.map(({ id }) => id) };
    const byId = new Map<string, R>();
    for (const contender of ordered) byId.set(contender.id, await run(contender, round));
    rounds.push(round);
    results.push(byId);
  }
  const get = (round: number, id: string): R => {
    const byId = results[round];
    if (byId === undefined || !byId.has(id)) {
      throw new RangeError(`No result of \`${id}\` in round ${round}`);
    }
    return byId.get(id) as R;
  };
  const of = (id: string): R[] => rounds.map((round) => get(round.index, id));
  return {
    rounds,
    get,
    of,
    perRound: (figure) => rounds.map((round) => figure((id) => get(round.index, id), round)),
    toJSON: () => ({ rounds, results: Object.fromEntries(ids.map((id) => [id, of(id)])) }),
  };
}

/** A summary of per-round figures: `rounds`, then each figure's median with `…Min`/`…Max`. */
export type RoundSummary<K extends string> = { readonly rounds: number } & {
  readonly [P in K | `${K}Min` | `${K}Max`]: number;
};

/**
 * Reduces per-round figures to the shape every area's `summary` has: the median under the
 * figure's own name (what a target is checked against), its extremes beside it.
 */
export function roundSummary<K extends string>(
  rounds: number,
  figures: Readonly<Record<K, readonly number[]>>,
): RoundSummary<K> {
  const summary: Record<string, number> = { rounds };
  for (const [name, values] of Object.entries(figures) as [K, readonly number[]][]) {
    if (values.length !== rounds) {
      throw new RangeError(`Expected ${rounds} values of \`${name}\`, got ${values.length}`);
    }
    const { median, min, max } = spread(values);
    summary[name] = median;
    summary[`${name}Min`] = min;
    summary[`${name}Max`] = max;
  }
  return summary as RoundSummary<K>;
}

function shuffle<T>(items: readonly T[], random: () => number): T[] {
  const out = [...items];
  for (let index = out.length - 1; index > 0; index--) {
    const other = Math.floor(random() * (index + 1));
    [out[index], out[other]] = [out[other] as T, out[index] as T];
  }
  return out;
}

function rotate<T>(items: readonly T[], by: number): T[] {
  const offset = items.length === 0 ? 0 : by % items.length;
  return [...items.slice(offset), ...items.slice(0, offset)];
}
