// `instanceof` on the outbox's errors holds across two installed copies of the package (a second
// copy of the errors module, loaded after a module reset, stands for the second install).

import { instanceofAcrossCopies } from "@telepace/testing";
import { expect, it, vi } from "vitest";
import * as errors from "../src/errors.js";

it("every error class answers for errors of another copy of the package as for its own", async () => {
  vi.resetModules();
  const copy = (await import("../src/errors.js")) as typeof errors;
  const details = { method: "sendMessage", errorCode: 403, description: "Forbidden" };
  const made = [
    new copy.OutboxError("ERR_OUTBOX_FULL", "full"),
    new copy.RetryAfterError(1_000),
    new copy.RetryAfterTooLongError(10_000, 1_000),
    new copy.TelegramApiError(details),
    new copy.ChatMigratedError(details, -100),
    new copy.ForbiddenError(details),
    new copy.NetworkError("lost", {
      method: "sendMessage",
      failure: "connection-lost",
      mayHaveReachedServer: true,
    }),
  ];
  expect(instanceofAcrossCopies(copy, errors, made)).toEqual([]);
  expect(made[4]).toBeInstanceOf(errors.TelegramApiError);
  expect(made[1]).not.toBeInstanceOf(errors.TelegramApiError);
  expect(new Error("plain")).not.toBeInstanceOf(errors.OutboxError);
  class Mine extends errors.OutboxError {}
  expect(new errors.OutboxError("ERR_OUTBOX_FULL", "x")).not.toBeInstanceOf(Mine);
  expect(new Mine("ERR_OUTBOX_FULL", "x")).toBeInstanceOf(Mine);
});
