// `instanceof` on this package's errors holds across two installed copies of it (a second copy
// of the errors module, loaded after a module reset, stands for the second install).

import { instanceofAcrossCopies } from "@telepace/testing";
import { expect, it, vi } from "vitest";
import * as errors from "../src/errors.js";

it("every error class answers for errors of another copy of the package as for its own", async () => {
  vi.resetModules();
  const copy = (await import("../src/errors.js")) as typeof errors;
  const made = [new copy.MediaSchedulerError("ERR_REGISTRY_CLOSED", "closed")];
  expect(instanceofAcrossCopies(copy, errors, made)).toEqual([]);
  expect(new Error("plain")).not.toBeInstanceOf(errors.MediaSchedulerError);
});
