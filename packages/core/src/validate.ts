// Uniform option validation, so every telepace package words its RangeErrors the same way.

/** What a numeric option or argument must be. */
export interface NumberRule {
  /** Require an integer. @defaultValue false */
  readonly integer?: boolean;
  /** Inclusive lower bound. */
  readonly min?: number;
  /** Inclusive upper bound. */
  readonly max?: number;
  /** Exclusive lower bound (for "greater than 0" on reals). */
  readonly greaterThan?: number;
}

function describe(rule: NumberRule): string {
  const parts: string[] = [];
  if (rule.greaterThan !== undefined) parts.push(`> ${rule.greaterThan}`);
  if (rule.min !== undefined) parts.push(`>= ${rule.min}`);
  if (rule.max !== undefined) parts.push(`<= ${rule.max}`);
  const kind = rule.integer ? "an integer" : "a finite number";
  return parts.length === 0 ? kind : `${kind} ${parts.join(" and ")}`;
}

function show(value: unknown): string {
  if (typeof value === "string") return JSON.stringify(value);
  if (typeof value === "bigint") return `${value}n`;
  return String(value);
}

/**
 * Checks a number against a rule and returns it; otherwise throws a `TypeError` (not a number)
 * or `RangeError` (out of range) naming it, e.g.
 * ``RangeError: Expected `maxInFlight` to be an integer >= 1, got 0``.
 *
 * @example
 * const limit = checkNumber("concurrency", options.concurrency, { integer: true, min: 1 });
 */
export function checkNumber(name: string, value: unknown, rule: NumberRule = {}): number {
  if (typeof value !== "number") {
    throw new TypeError(`Expected \`${name}\` to be ${describe(rule)}, got ${show(value)}`);
  }
  const ok =
    (rule.integer ? Number.isSafeInteger(value) : Number.isFinite(value)) &&
    (rule.min === undefined || value >= rule.min) &&
    (rule.max === undefined || value <= rule.max) &&
    (rule.greaterThan === undefined || value > rule.greaterThan);
  if (!ok) throw new RangeError(`Expected \`${name}\` to be ${describe(rule)}, got ${show(value)}`);
  return value;
}
