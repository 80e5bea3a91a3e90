// `instanceof` across two installed copies of a package: a test loads the package's errors module
// twice (the second time after `vi.resetModules()`, as a second install would) and checks that
// every class of one copy answers for the other copy's errors as that copy's own class does.

/** A class whose answer for an error differs between the two copies. */
export interface InstanceofMismatch {
  /** The error's constructor name. */
  readonly error: string;
  /** The class `instanceof` was asked about. */
  readonly class: string;
  /** What the error's own copy of the class answered. */
  readonly ownCopy: boolean;
  /** What the other copy of the class answered. */
  readonly otherCopy: boolean;
}

type ErrorClass = abstract new (...args: never[]) => Error;

function errorClassesOf(module: Readonly<Record<string, unknown>>): [string, ErrorClass][] {
  return Object.entries(module).filter(
    (entry): entry is [string, ErrorClass] =>
      typeof entry[1] === "function" && entry[1].prototype instanceof Error,
  );
}

/**
 * For errors made with the classes of `ownCopy`, every class of `otherCopy` whose answer to
 * `instanceof` differs from its namesake's in `ownCopy`; empty when brands work. Throws when the
 * two modules are one copy (the test would prove nothing) or when an error is not of `ownCopy`.
 *
 * @example
 * vi.resetModules();
 * const copy = (await import("../src/errors.js")) as typeof import("../src/errors.js");
 * expect(instanceofAcrossCopies(copy, errors, [new copy.OutboxError("ERR_OUTBOX_FULL", "x")])).toEqual([]);
 */
export function instanceofAcrossCopies(
  ownCopy: Readonly<Record<string, unknown>>,
  otherCopy: Readonly<Record<string, unknown>>,
  errors: readonly Error[],
): InstanceofMismatch[] {
  const own = new Map(errorClassesOf(ownCopy));
  const other = errorClassesOf(otherCopy);
  if (other.length === 0 || other.some(([name, errorClass]) => own.get(name) === errorClass)) {
    throw new Error("instanceofAcrossCopies needs two copies of a module of error classes");
  }
  const mismatches: InstanceofMismatch[] = [];
  for (const error of errors) {
    const made = error.constructor.name;
    if (own.get(made) !== error.constructor) {
      throw new Error(`instanceofAcrossCopies: ${made} is not a class of the first copy`);
    }
    for (const [name, errorClass] of other) {
      const ownClass = own.get(name) as ErrorClass;
      const answers = {
        ownCopy: error instanceof ownClass,
        otherCopy: error instanceof errorClass,
      };
      if (answers.ownCopy !== answers.otherCopy)
        mismatches.push({ error: made, class: name, ...answers });
    }
  }
  return mismatches;
}
