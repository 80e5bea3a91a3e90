// Error classes whose `instanceof` holds across installed copies of a package (two versions in
// one dependency tree, a bundled and an installed one), as undici's do: each class carries a
// brand, `Symbol.for("<package>:<class>")`, on its prototype, and its `Symbol.hasInstance` looks
// for that brand instead of walking the prototype chain.

type ErrorClass = abstract new (...args: never[]) => Error;

// Where a branded class keeps its brand. A class without one of its own (a subclass a user
// wrote) is matched the ordinary way.
const BRAND_OF = Symbol.for("telepace.errorBrand");

/**
 * `value instanceof this` by brand: true for an error with a string `code` made by this class, a
 * subclass of it, or the same class of another installed copy of its package. A class without a
 * brand of its own (a user's subclass, which inherits this method) is matched by its prototype
 * chain.
 */
function hasBrand(this: ErrorClass, value: unknown): boolean {
  const brand = Object.hasOwn(this, BRAND_OF)
    ? (this as unknown as Record<symbol, unknown>)[BRAND_OF]
    : undefined;
  if (typeof brand !== "symbol") return Function.prototype[Symbol.hasInstance].call(this, value);
  return (
    typeof value === "object" &&
    value !== null &&
    (value as Record<symbol, unknown>)[brand] === true &&
    typeof (value as { code?: unknown }).code === "string"
  );
}

/**
 * Brands a package's error classes, each under the name it has in `classes`, and gives each a
 * `Symbol.hasInstance` that matches by brand, so `instanceof` holds for an error made by another
 * installed copy of the package. Call it once, after the classes, in the module that declares
 * them.
 *
 * @example
 * brandErrors("@telepace/outbox", { OutboxError, RetryAfterError });
 * // then, in any copy: error instanceof RetryAfterError
 */
export function brandErrors(
  packageName: string,
  classes: Readonly<Record<string, abstract new (...args: never[]) => Error>>,
): void {
  for (const [name, errorClass] of Object.entries(classes)) {
    const brand = Symbol.for(`${packageName}:${name}`);
    Object.defineProperty(errorClass, BRAND_OF, { value: brand });
    Object.defineProperty(errorClass, Symbol.hasInstance, { value: hasBrand });
    Object.defineProperty(errorClass.prototype, brand, { value: true });
  }
}
