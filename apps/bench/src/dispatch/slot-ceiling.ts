// The fastest any dispatcher could have drained a backlog with a given number of processor slots,
// from the time each update actually held its slot: what the long-polling ratios are measured
// against, so a ratio no dispatcher could reach shows as one.

/**
 * Updates per second that no schedule with `slots` processor slots and one update at a time per
 * principal can beat, given that update `i` held its slot `heldMs[i]` ms: the finished updates ÷
 * the larger of (their total hold ÷ `slots`) and the longest total hold of one principal. Both
 * are lower bounds on any such schedule's makespan, and fetching, dispatching and idle slots
 * cost nothing here, so this is a ceiling rather than an estimate. Unfinished updates (NaN) are
 * left out.
 */
export function slotCeilingPerSecond(
  heldMs: Float64Array,
  principalOf: Uint32Array,
  principals: number,
  slots: number,
): number {
  if (!Number.isInteger(slots) || slots < 1) {
    throw new RangeError(`slots must be a positive integer, got ${slots}`);
  }
  if (heldMs.length !== principalOf.length) {
    throw new RangeError(
      `heldMs has ${heldMs.length} entries but principalOf has ${principalOf.length}`,
    );
  }
  const chainMs = new Float64Array(principals);
  let totalMs = 0;
  let finished = 0;
  for (let index = 0; index < heldMs.length; index++) {
    const held = heldMs[index] as number;
    if (Number.isNaN(held)) continue;
    const principal = principalOf[index] as number;
    if (principal >= principals) {
      throw new RangeError(`update ${index} has principal ${principal}, beyond ${principals}`);
    }
    finished++;
    totalMs += held;
    chainMs[principal] = (chainMs[principal] as number) + held;
  }
  let longestChainMs = 0;
  for (const chain of chainMs) longestChainMs = Math.max(longestChainMs, chain);
  const makespanMs = Math.max(totalMs / slots, longestChainMs);
  return makespanMs === 0 ? Number.POSITIVE_INFINITY : (finished * 1000) / makespanMs;
}
