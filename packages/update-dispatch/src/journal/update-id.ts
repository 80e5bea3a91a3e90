// Reading an update's `update_id` defensively: journals and the intake key everything on it, and
// an update from a webhook body may be anything.

import type { Update } from "@grammyjs/types";

/**
 * The update's `update_id` when it is a safe integer >= 0 (Telegram's ids are positive; every
 * journal takes the same ids), otherwise `undefined`.
 */
export function validUpdateId(update: unknown): number | undefined {
  if (typeof update !== "object" || update === null) return undefined;
  const id = (update as { readonly update_id?: unknown }).update_id;
  return Number.isSafeInteger(id) && (id as number) >= 0 ? (id as number) : undefined;
}

/**
 * The updates with a valid `update_id` (the same array when all are, as they nearly always are),
 * and how many were not.
 */
export function withValidIds(updates: readonly Update[]): {
  readonly valid: readonly Update[];
  readonly invalid: number;
} {
  let invalid = 0;
  // Indexed: once per batch, often not yet optimised, where `for of` allocates per update.
  for (let index = 0; index < updates.length; index++) {
    if (validUpdateId(updates[index]) === undefined) invalid++;
  }
  if (invalid === 0) return { valid: updates, invalid };
  return { valid: updates.filter((update) => validUpdateId(update) !== undefined), invalid };
}
