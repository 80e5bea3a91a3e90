// `instanceof CoreError` holds across two installed copies of the package (a second copy of the
// errors module, loaded after a module reset, stands for the second install).

import { expect, it, vi } from "vitest";
import * as errors from "../src/errors.js";

it("CoreError answers for an error of another copy of the package", async () => {
  vi.resetModules();
  const copy = (await import("../src/errors.js")) as typeof errors;
  expect(copy.CoreError).not.toBe(errors.CoreError);
  expect(new copy.CoreError("ERR_SEMAPHORE_CLOSED", "closed")).toBeInstanceOf(errors.CoreError);
  expect(new Error("plain")).not.toBeInstanceOf(errors.CoreError);
  // A subclass without a brand of its own is matched by its prototype chain.
  class Mine extends errors.CoreError {}
  expect(new errors.CoreError("ERR_SEMAPHORE_CLOSED", "x")).not.toBeInstanceOf(Mine);
  expect(new Mine("ERR_SEMAPHORE_CLOSED", "x")).toBeInstanceOf(errors.CoreError);
});
