// Uniform option validation, so every telepace package words its TypeErrors and RangeErrors the
// same way: `Expected \`name\` to be <what>, got <value>`.

import type { Clock } from "./clock.js";

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

/**
 * How a rejected value is shown in an error: strings quoted, objects by kind (never formatted,
 * so a payload or a secret inside one cannot reach the message).
 */
export function describeValue(value: unknown): string {
  if (typeof value === "string") {
    return value.length > 40 ? `${JSON.stringify(value.slice(0, 40))}…` : JSON.stringify(value);
  }
  if (typeof value === "bigint") return `${value}n`;
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  if (typeof value === "function") return "a function";
  if (typeof value === "object") return "an object";
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
    throw new TypeError(
      `Expected \`${name}\` to be ${describe(rule)}, got ${describeValue(value)}`,
    );
  }
  const ok =
    (rule.integer ? Number.isSafeInteger(value) : Number.isFinite(value)) &&
    (rule.min === undefined || value >= rule.min) &&
    (rule.max === undefined || value <= rule.max) &&
    (rule.greaterThan === undefined || value > rule.greaterThan);
  if (!ok) {
    throw new RangeError(
      `Expected \`${name}\` to be ${describe(rule)}, got ${describeValue(value)}`,
    );
  }
  return value;
}

/**
 * An optional number: `undefined` gives `fallback`, anything else (`null` included) must pass
 * {@link checkNumber}.
 */
export function checkOptionalNumber(
  name: string,
  value: unknown,
  fallback: number,
  rule: NumberRule = {},
): number {
  return value === undefined ? fallback : checkNumber(name, value, rule);
}

/** A plain object (not `null`, not an array); returns it for destructuring. */
export function checkObject(name: string, value: unknown): Readonly<Record<string, unknown>> {
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw new TypeError(`Expected \`${name}\` to be an object, got ${describeValue(value)}`);
  }
  return value as Readonly<Record<string, unknown>>;
}

/** The number of single-character edits between two names (for "did you mean"). */
function editDistance(a: string, b: string): number {
  const x = a.toLowerCase();
  const y = b.toLowerCase();
  let previous = Array.from({ length: y.length + 1 }, (_, index) => index);
  for (let i = 1; i <= x.length; i++) {
    const current = [i];
    for (let j = 1; j <= y.length; j++) {
      const substitution = (previous[j - 1] ?? 0) + (x[i - 1] === y[j - 1] ? 0 : 1);
      current[j] = Math.min((previous[j] ?? 0) + 1, (current[j - 1] ?? 0) + 1, substitution);
    }
    previous = current;
  }
  return previous[y.length] ?? 0;
}

/** The known name closest to `key`, when one is close enough to be a plausible typo. */
export function closestName(key: string, known: readonly string[]): string | undefined {
  let best: string | undefined;
  let bestDistance = Number.POSITIVE_INFINITY;
  for (const name of known) {
    const distance = editDistance(key, name);
    if (distance < bestDistance) {
      best = name;
      bestDistance = distance;
    }
  }
  const tolerance = Math.max(2, Math.floor(key.length / 3));
  return bestDistance <= tolerance ? best : undefined;
}

/**
 * Checks an options argument whole: `undefined` is `{}`, anything that is not a plain object is a
 * `TypeError`, and so is a key outside `known` (naming the closest valid one), e.g.
 * ``TypeError: Unknown option `maxConcurency` in `options` (did you mean `maxConcurrency`?)``.
 *
 * @example
 * const given = checkOptions("options", options, ["maxConcurrency", "clock"]);
 */
export function checkOptions(
  name: string,
  value: unknown,
  known: readonly string[],
): Readonly<Record<string, unknown>> {
  if (value === undefined) return {};
  const given = checkObject(name, value);
  // for-in with an own-key check allocates nothing (Object.keys would, on every hot-path call).
  for (const key in given) {
    if (!Object.hasOwn(given, key) || known.includes(key)) continue;
    const near = closestName(key, known);
    const hint =
      near === undefined ? `valid options: ${known.join(", ")}` : `did you mean \`${near}\`?`;
    throw new TypeError(`Unknown option \`${key}\` in \`${name}\` (${hint})`);
  }
  return given;
}

/** A boolean, or `fallback` when `undefined`. */
export function checkBoolean(name: string, value: unknown, fallback: boolean): boolean {
  if (value === undefined) return fallback;
  if (typeof value !== "boolean") {
    throw new TypeError(`Expected \`${name}\` to be a boolean, got ${describeValue(value)}`);
  }
  return value;
}

/** A function. */
export function checkFunction<T extends (...args: never[]) => unknown>(
  name: string,
  value: unknown,
): T {
  if (typeof value !== "function") {
    throw new TypeError(`Expected \`${name}\` to be a function, got ${describeValue(value)}`);
  }
  return value as T;
}

/** An optional `AbortSignal`. */
export function checkSignal(name: string, value: unknown): AbortSignal | undefined {
  if (value === undefined || value instanceof AbortSignal) return value;
  throw new TypeError(`Expected \`${name}\` to be an AbortSignal, got ${describeValue(value)}`);
}

/**
 * An optional object that must have the named methods (a logger, a store, a clock…); returns
 * `undefined` when the value is `undefined`.
 */
export function checkMethods<T>(
  name: string,
  value: unknown,
  methods: readonly string[],
): T | undefined {
  if (value === undefined) return undefined;
  const isObject = (typeof value === "object" && value !== null) || typeof value === "function";
  const missing = isObject
    ? methods.filter((method) => typeof (value as Record<string, unknown>)[method] !== "function")
    : methods;
  if (missing.length > 0) {
    const list = (names: readonly string[]) => names.map((m) => `\`${m}\``).join(", ");
    const got = isObject ? `an object without ${list(missing)}` : describeValue(value);
    throw new TypeError(`Expected \`${name}\` to be an object with ${list(methods)}, got ${got}`);
  }
  return value as T;
}

/** An optional `Clock` (`now()` and `setTimer()`), `fallback` when `undefined`. */
export function checkClock(value: unknown, fallback: Clock, name = "clock"): Clock {
  return checkMethods<Clock>(name, value, ["now", "setTimer", "sleep"]) ?? fallback;
}
