// `instanceof JournalError` holds across two installed copies of the package (a second copy of
// the errors module, loaded after a module reset, stands for the second install).

import { expect, it, vi } from "vitest";
import * as errors from "../src/errors.js";

it("JournalError answers for an error of another copy of the package", async () => {
  vi.resetModules();
  const copy = (await import("../src/errors.js")) as typeof errors;
  expect(copy.JournalError).not.toBe(errors.JournalError);
  expect(copy.ioError("read", new Error("EIO"))).toBeInstanceOf(errors.JournalError);
  expect(new Error("plain")).not.toBeInstanceOf(errors.JournalError);
});
