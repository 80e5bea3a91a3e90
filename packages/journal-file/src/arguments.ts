// Checks of what callers hand the journal (update batches, ids, state keys and values), worded
// like every telepace TypeError: `Expected \`name\` to be <what>, got <value>`.

import type { Update } from "@grammyjs/types";
import { checkNumber, describeValue } from "@telepace/core";
import type { JournalStateValue } from "@telepace/update-dispatch";

/** An update id: a safe integer >= 0. */
export function checkUpdateId(name: string, value: unknown): number {
  return checkNumber(name, value, { integer: true, min: 0 });
}

/** A list of update ids. */
export function checkUpdateIds(value: unknown): readonly number[] {
  if (!Array.isArray(value)) {
    throw new TypeError(`Expected \`updateIds\` to be an array, got ${describeValue(value)}`);
  }
  value.forEach((id: unknown, index) => {
    checkUpdateId(`updateIds[${index}]`, id);
  });
  return value as readonly number[];
}

/** A batch: an array of objects with a valid `update_id`. */
export function checkUpdates(value: unknown): readonly Update[] {
  if (!Array.isArray(value)) {
    throw new TypeError(`Expected \`updates\` to be an array, got ${describeValue(value)}`);
  }
  value.forEach((update: unknown, index) => {
    if (typeof update !== "object" || update === null || Array.isArray(update)) {
      throw new TypeError(
        `Expected \`updates[${index}]\` to be an update object, got ${describeValue(update)}`,
      );
    }
    checkUpdateId(`updates[${index}].update_id`, (update as { update_id?: unknown }).update_id);
  });
  return value as readonly Update[];
}

/** A state key: a string. */
export function checkStateKey(value: unknown): string {
  if (typeof value !== "string") {
    throw new TypeError(`Expected \`key\` to be a string, got ${describeValue(value)}`);
  }
  return value;
}

function isPlainObject(value: object): boolean {
  const prototype = Object.getPrototypeOf(value);
  return prototype === Object.prototype || prototype === null;
}

/**
 * A JSON value that survives a round trip unchanged: no `undefined`, functions, NaN or
 * Infinity (which `JSON.stringify` would silently turn into something else), no class instances,
 * no cycles.
 */
export function checkStateValue(
  value: unknown,
  name = "value",
  ancestors: readonly object[] = [],
): JournalStateValue {
  const fail = (): never => {
    throw new TypeError(
      `Expected \`${name}\` to be a JSON value (string, finite number, boolean, null, array or plain object), got ${describeValue(value)}`,
    );
  };
  if (value === null || typeof value === "string" || typeof value === "boolean") return value;
  if (typeof value === "number") return Number.isFinite(value) ? value : fail();
  if (typeof value !== "object" || ancestors.includes(value)) return fail();
  const inside = [...ancestors, value];
  if (Array.isArray(value)) {
    value.forEach((item: unknown, index) => {
      checkStateValue(item, `${name}[${index}]`, inside);
    });
    return value as JournalStateValue;
  }
  if (isPlainObject(value)) {
    for (const [key, item] of Object.entries(value)) {
      checkStateValue(item, `${name}.${key}`, inside);
    }
    return value as JournalStateValue;
  }
  return fail();
}
