// The public types a user relies on, checked by the compiler (vitest's typecheck): messages typed
// by their method, outcomes and snapshots readonly, unknown options refused.

import type { TelegramClient } from "@telepace/client";
import { describe, expectTypeOf, it } from "vitest";
import type {
  BroadcastClient,
  BroadcastMessage,
  BroadcastParams,
  BroadcastRegistry,
  BroadcastReport,
  BroadcastSnapshot,
  StartBroadcastOptions,
} from "../src/index.js";

describe("types", () => {
  it("types a message's parameters by its method, without chat_id", () => {
    expectTypeOf<{
      method: "sendMessage";
      params: { text: string };
    }>().toMatchTypeOf<BroadcastMessage>();
    expectTypeOf<
      "chat_id" extends keyof BroadcastParams<"sendMessage"> ? true : false
    >().toEqualTypeOf<false>();
    expectTypeOf<
      "allow_paid_broadcast" extends keyof BroadcastParams<"sendMessage"> ? true : false
    >().toEqualTypeOf<false>();
    expectTypeOf<{ method: "getMe"; params: object }>().not.toMatchTypeOf<BroadcastMessage>();
    expectTypeOf<{
      method: "copyMessage";
      params: { from_chat_id: number; message_id: number };
    }>().toMatchTypeOf<BroadcastMessage>();
  });

  it("takes a TelegramClient as it is", () => {
    expectTypeOf<TelegramClient>().toMatchTypeOf<BroadcastClient>();
    expectTypeOf<BroadcastRegistry["start"]>().parameter(1).toEqualTypeOf<StartBroadcastOptions>();
  });

  it("hands out readonly reports and snapshots", () => {
    expectTypeOf<BroadcastReport["status"]>().toEqualTypeOf<
      "completed" | "cancelled" | "failed" | "interrupted"
    >();
    expectTypeOf<BroadcastSnapshot["etaMs"]>().toEqualTypeOf<number | undefined>();
    const snapshot = {} as BroadcastSnapshot;
    // @ts-expect-error snapshots are readonly
    snapshot.settled = 1;
  });
});
