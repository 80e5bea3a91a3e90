// Summary statistics for benchmark samples: nearest-rank percentiles, medians with their range
// over rounds, and the ratio formatting every table uses, so all areas report figures the same way.

/** A distribution summarised; every field is NaN when there were no samples. */
export interface Summary {
  readonly count: number;
  readonly min: number;
  readonly p50: number;
  readonly p90: number;
  readonly p99: number;
  readonly max: number;
  readonly mean: number;
}

/**
 * The nearest-rank percentile of ascending `sorted` values: the smallest value such that at least
 * `p` percent of the samples are at or below it. NaN for no samples.
 * @param p - percent, 0..100
 */
export function percentile(sorted: readonly number[], p: number): number {
  if (!(p >= 0 && p <= 100)) throw new RangeError(`Expected \`p\` to be in 0..100, got ${p}`);
  if (sorted.length === 0) return Number.NaN;
  const rank = Math.max(1, Math.ceil((p / 100) * sorted.length));
  return sorted[rank - 1] as number;
}

/** Summarises samples (they need not be sorted; the input is not modified). */
export function summarize(values: readonly number[]): Summary {
  const sorted = [...values].sort((a, b) => a - b);
  let sum = 0;
  for (const value of sorted) sum += value;
  return {
    count: sorted.length,
    min: sorted.length === 0 ? Number.NaN : (sorted[0] as number),
    p50: percentile(sorted, 50),
    p90: percentile(sorted, 90),
    p99: percentile(sorted, 99),
    max: sorted.length === 0 ? Number.NaN : (sorted[sorted.length - 1] as number),
    mean: sorted.length === 0 ? Number.NaN : sum / sorted.length,
  };
}

/** A figure over rounds: the median round's value and the extremes beside it. */
export interface Spread {
  readonly median: number;
  readonly min: number;
  readonly max: number;
}

/**
 * The median of `values`: the middle one, or the lower of the two middle ones for an even count
 * (always a value some round measured, as the nearest-rank p50). NaN when there are none or
 * any is not finite: a figure that was undefined in one round is not summarised as if it held.
 */
export function median(values: readonly number[]): number {
  return spread(values).median;
}

/** Median, min and max of `values`; all NaN when there are none or any is not finite. */
export function spread(values: readonly number[]): Spread {
  if (values.length === 0 || !values.every(Number.isFinite)) {
    return { median: Number.NaN, min: Number.NaN, max: Number.NaN };
  }
  const sorted = [...values].sort((a, b) => a - b);
  return {
    median: percentile(sorted, 50),
    min: sorted[0] as number,
    max: sorted[sorted.length - 1] as number,
  };
}

/** A spread as a table cell: `0.31× (0.28–0.35)`, each part through `format`. */
export function formatSpread(value: Spread, format: (value: number) => string): string {
  if (!Number.isFinite(value.median)) return format(Number.NaN);
  return value.min === value.max
    ? format(value.median)
    : `${format(value.median)} (${format(value.min)}–${format(value.max)})`;
}

/** `value / baseline`; NaN when either is not finite or the baseline is 0 and the value is not. */
export function ratio(value: number, baseline: number): number {
  if (!Number.isFinite(value) || !Number.isFinite(baseline)) return Number.NaN;
  if (baseline === 0) return value === 0 ? 1 : Number.NaN;
  return value / baseline;
}

/**
 * A ratio as a table cell: `1.00×`, `0.043×`, `12.4×`, `1,204×`; "n/a" when it is undefined.
 * Three significant digits keep small and large ratios equally readable.
 */
export function formatRatio(value: number): string {
  if (!Number.isFinite(value)) return "n/a";
  if (value === 0) return "0×";
  const magnitude = Math.abs(value);
  const text =
    magnitude >= 100
      ? Math.round(value).toLocaleString("en-US")
      : magnitude >= 10
        ? value.toFixed(1)
        : magnitude >= 0.1
          ? value.toFixed(2)
          : value.toPrecision(2);
  return `${text}×`;
}

/** A count as a table cell with thousands separators; "n/a" when not finite. */
export function formatCount(value: number): string {
  return Number.isFinite(value) ? Math.round(value).toLocaleString("en-US") : "n/a";
}

/** A number with a fixed number of decimals; "n/a" when not finite. */
export function formatFixed(value: number, digits: number): string {
  return Number.isFinite(value) ? value.toFixed(digits) : "n/a";
}
