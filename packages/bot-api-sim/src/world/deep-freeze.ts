// Messages handed out by the control API are shared with the simulator's own state, so they are
// frozen all the way down: a test that mutates one gets a TypeError instead of corrupting state.

/** Freezes an object graph in place and returns it. */
export function deepFreeze<T>(value: T): T {
  if (typeof value !== "object" || value === null || Object.isFrozen(value)) return value;
  Object.freeze(value);
  for (const child of Object.values(value as Record<string, unknown>)) deepFreeze(child);
  return value;
}
