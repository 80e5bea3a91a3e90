// Comparing the X-Telegram-Bot-Api-Secret-Token header with the configured secret in constant
// time, so response timing cannot reveal how much of a guess was right.

const encoder = new TextEncoder();

/**
 * Whether `given` equals `expected`. The time taken depends only on the length of `expected`:
 * every byte is compared, and a missing or shorter header is compared against zeros.
 */
export function secretTokenMatches(expected: string, given: string | undefined): boolean {
  const want = encoder.encode(expected);
  const got = encoder.encode(given ?? "");
  let difference = want.length ^ got.length;
  for (let i = 0; i < want.length; i++) {
    difference |= (want[i] as number) ^ (got[i] ?? 0);
  }
  return given !== undefined && difference === 0;
}
