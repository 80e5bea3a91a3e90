// The public types a client user relies on, checked by the compiler (vitest's typecheck): results
// inferred from the method, send outcomes without "not modified", readonly options with unknown
// keys refused, and the outbox's vocabulary re-exported under the same identity.

import type { Message, User } from "@grammyjs/types";
import * as outbox from "@telepace/outbox";
import { describe, expectTypeOf, it } from "vitest";
import {
  type ClientErrorCode,
  type FileDownload,
  type MethodParams,
  type SendOutcome,
  TelegramClient,
  type TelegramClientOptions,
  type WriteOutcome,
  writeKeys,
} from "../src/index.js";

declare const client: TelegramClient;

describe("TelegramClient", () => {
  it("infers each method's result", () => {
    expectTypeOf(client.sendMessage(1, "hi")).toEqualTypeOf<
      Promise<SendOutcome<Message.TextMessage>>
    >();
    expectTypeOf(client.getMe()).resolves.toExtend<User>();
    expectTypeOf(client.call("getMe")).toEqualTypeOf(client.getMe());
    expectTypeOf(client.downloadFile("a/b")).toEqualTypeOf<Promise<FileDownload>>();
    expectTypeOf(client.write("setMessageReaction", { chat_id: 1, message_id: 2 })).toEqualTypeOf<
      Promise<WriteOutcome<true>>
    >();
  });

  it("types a method's parameters, and refuses a wrong one", () => {
    expectTypeOf<MethodParams<"sendMessage">>().toHaveProperty("reply_markup");
    // @ts-expect-error `text` is an argument of its own, not a parameter
    void client.sendMessage(1, "hi", { text: "again" });
    // @ts-expect-error an unknown method
    void client.write("sendTelegram", {});
  });

  it("gives sends an outcome without the not-modified case, and edits one with it", () => {
    const sent = {} as SendOutcome<Message.TextMessage>;
    if (sent.status === "delivered") expectTypeOf(sent.result).toEqualTypeOf<Message.TextMessage>();
    const edited = {} as WriteOutcome<true>;
    if (edited.status === "delivered" && edited.notModified) {
      expectTypeOf(edited.result).toEqualTypeOf<undefined>();
    }
    if (sent.status === "failed") {
      expectTypeOf(sent.error).toEqualTypeOf<
        outbox.OutboxError | import("../src/index.js").ClientError
      >();
    }
  });

  it("takes readonly options with a required token, and refuses an unknown key", () => {
    expectTypeOf<TelegramClientOptions["token"]>().toEqualTypeOf<string>();
    expectTypeOf<TelegramClientOptions>().toExtend<{
      readonly requestTimeoutMs?: number | undefined;
    }>();
    // @ts-expect-error the token is required
    new TelegramClient({});
    // @ts-expect-error a misspelt option of the nested outbox
    new TelegramClient({ token: "1:x", outbox: { maxInflight: 1 } });
    // @ts-expect-error the client's clock is the outbox's: it is not an outbox option here
    new TelegramClient({ token: "1:x", outbox: { clock: undefined } });
  });

  it("re-exports the outbox's classes and keys as they are", () => {
    expectTypeOf(writeKeys).toEqualTypeOf(outbox.writeKeys);
    expectTypeOf<ClientErrorCode>().toExtend<string>();
    expectTypeOf(client.outbox).toEqualTypeOf<outbox.TelegramOutbox>();
  });
});
