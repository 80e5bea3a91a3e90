// Deterministic randomness for workloads: a seeded 32-bit generator and a Zipf sampler, so every
// contender in a comparison gets exactly the same sequence.

/** A uniform generator on [0, 1), seeded; xorshift32 with a splitmix-style seed scramble. */
export function seededRandom(seed: number): () => number {
  let state = Math.imul(seed ^ 0x9e3779b9, 0x85ebca6b) >>> 0 || 0x6d2b79f5;
  return () => {
    state ^= state << 13;
    state >>>= 0;
    state ^= state >>> 17;
    state ^= state << 5;
    state >>>= 0;
    return state / 4_294_967_296;
  };
}

/** A uniform integer in [min, max] from `random`. */
export function randomInt(random: () => number, min: number, max: number): number {
  return min + Math.floor(random() * (max - min + 1));
}

/**
 * Draws ranks 0..n-1 with probability proportional to 1/(rank+1)^exponent: rank 0 is the
 * busiest. Exponent 0 is uniform.
 */
export function zipfSampler(n: number, exponent: number, random: () => number): () => number {
  if (!Number.isInteger(n) || n < 1)
    throw new RangeError(`Expected \`n\` to be an integer >= 1, got ${n}`);
  if (!(exponent >= 0)) throw new RangeError(`Expected \`exponent\` to be >= 0, got ${exponent}`);
  const cumulative = new Float64Array(n);
  let total = 0;
  for (let rank = 0; rank < n; rank++) {
    total += 1 / (rank + 1) ** exponent;
    cumulative[rank] = total;
  }
  return () => {
    const target = random() * total;
    let low = 0;
    let high = n - 1;
    while (low < high) {
      const middle = (low + high) >>> 1;
      if ((cumulative[middle] as number) > target) high = middle;
      else low = middle + 1;
    }
    return low;
  };
}
