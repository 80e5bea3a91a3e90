// Charging: every request is charged against a budget in whole 64 KiB units, so a budget counts
// what a chunk occupies, not only what it asks for.

/** Every charge is rounded up to a whole number of these units (64 KiB). */
export const mediaChargeUnitBytes = 64 * 1024;

/** Rounds `bytes` up to a whole number of charge units. @internal */
export function chargeOf(bytes: number): number {
  return Math.ceil(bytes / mediaChargeUnitBytes) * mediaChargeUnitBytes;
}
