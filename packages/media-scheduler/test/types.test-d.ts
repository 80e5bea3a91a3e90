// The public types of the media scheduler, checked by the compiler (vitest's typecheck): permits
// for `using` and `await using`, closed sets of kinds, readonly options with unknown keys refused,
// and readonly snapshots.

import { describe, expectTypeOf, it } from "vitest";
import {
  type MediaDirection,
  type MediaPermit,
  type MediaPriority,
  type MediaSchedulerError,
  type MediaSchedulerErrorCode,
  MediaSchedulerRegistry,
  type MediaSchedulerRegistrySnapshot,
  type MediaTransfer,
  type OpenTransferOptions,
} from "../src/index.js";

declare const registry: MediaSchedulerRegistry;
declare const transfer: MediaTransfer;

describe("media scheduler", () => {
  it("opens transfers and grants permits to release with using or await using", () => {
    expectTypeOf(registry.open({ dc: 1, direction: "download" })).toEqualTypeOf<MediaTransfer>();
    expectTypeOf(transfer.acquire(65_536)).toEqualTypeOf<Promise<MediaPermit>>();
    expectTypeOf<MediaPermit>().toExtend<Disposable & AsyncDisposable>();
    expectTypeOf<MediaTransfer>().toExtend<Disposable>();
  });

  it("names directions and priorities as closed sets", () => {
    expectTypeOf<MediaDirection>().toEqualTypeOf<"download" | "upload">();
    expectTypeOf<MediaPriority>().toEqualTypeOf<"foreground" | "background">();
    // @ts-expect-error a direction outside the set
    registry.open({ dc: 1, direction: "sideways" });
    expectTypeOf<OpenTransferOptions["sizeBytes"]>().toEqualTypeOf<number | undefined>();
  });

  it("takes readonly options and refuses an unknown key", () => {
    // @ts-expect-error a misspelt option
    new MediaSchedulerRegistry({ largeTransferThreshold: 1 });
  });

  it("hands out readonly snapshots and coded errors", () => {
    const snapshot = registry.snapshot();
    expectTypeOf(snapshot).toEqualTypeOf<MediaSchedulerRegistrySnapshot>();
    // @ts-expect-error a snapshot is read, never written
    snapshot.schedulers = [];
    expectTypeOf<MediaSchedulerError["code"]>().toEqualTypeOf<MediaSchedulerErrorCode>();
  });
});
