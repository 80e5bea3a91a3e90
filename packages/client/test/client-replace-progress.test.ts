import type { ServerResponse } from "node:http";
import type { OutboxDelivered } from "@telepace/outbox";
import { eventually } from "@telepace/testing";
import { describe, expect, it } from "vitest";
import { Priority, writeKeys } from "../src/index.js";
import { apiError, message, ok, type RecordedRequest } from "./support/bot-server.js";
import { connect } from "./support/client.js";

/** A handler that answers edits only when the test releases them. */
function holdingEdits() {
  const held: (() => void)[] = [];
  let failSend = false;
  const handler = (request: RecordedRequest, res: ServerResponse) => {
    if (request.method === "editMessageText") {
      held.push(() => ok(res, message(10, 1, String(request.params.text))));
      return;
    }
    if (request.method === "sendMessage") {
      return failSend
        ? apiError(res, 400, "Bad Request: can't parse entities")
        : ok(res, message(11, 1, "final"));
    }
    ok(res, true);
  };
  return {
    handler,
    release: () => held.shift()?.(),
    failSends: () => {
      failSend = true;
    },
  };
}

/** A client on a {@link holdingEdits} server, with an edit of message 10 held in flight. */
async function editInFlight(text: string) {
  const server = holdingEdits();
  const { server: api, client } = await connect(server.handler);
  const inFlight = client.editMessageText(1, 10, text);
  await eventually("the edit reached the server", () =>
    expect(api.methods).toEqual(["editMessageText"]),
  );
  return { server, api, client, inFlight };
}

describe("seed: replace-progress (sendMessage with replaceMessageId)", { timeout: 20_000 }, () => {
  it("drops the pending edit, sends at top priority, deletes the progress message only after the send", async () => {
    const { server, api, client, inFlight } = await editInFlight("progress 10%");
    const stale = client.editMessageText(1, 10, "progress 90%");
    const final = client.sendMessage(1, "final answer", {}, { replaceMessageId: 10 });
    expect(await stale).toEqual({ status: "superseded", reason: "dropped", attempts: 0 });
    server.release();
    const outcome = await final;
    expect(outcome).toMatchObject({ status: "delivered", result: { message_id: 11 } });
    const deletion = await (outcome as OutboxDelivered<unknown>).followUp;
    expect(deletion).toMatchObject({ status: "delivered", result: true });
    expect((await inFlight).status).toBe("delivered");
    expect(api.requests.map((r) => [r.method, r.params.text ?? r.params.message_id])).toEqual([
      ["editMessageText", "progress 10%"],
      ["sendMessage", "final answer"],
      ["deleteMessage", 10],
    ]);
  });

  it("keeps the progress message when the send fails (no delete is ever sent)", async () => {
    const server = holdingEdits();
    server.failSends();
    const { server: api, client } = await connect(server.handler);
    const outcome = await client.sendMessage(1, "final", {}, { replaceMessageId: 10 });
    expect(outcome).toMatchObject({ status: "failed", error: { errorCode: 400 } });
    expect("followUp" in outcome).toBe(false);
    // A delete would have been enqueued (as a follow-up) before the send's outcome settled.
    const { pending, inFlight, counters } = client.outbox.snapshot();
    expect({ pending, inFlight, enqueued: counters.enqueued }).toEqual({
      pending: 0,
      inFlight: 0,
      enqueued: 1,
    });
    expect(api.methods).toEqual(["sendMessage"]);
  });

  it("replace-progress sends for the same progress message coalesce (one final message)", async () => {
    const { server, api, client, inFlight } = await editInFlight("progress");
    const first = client.sendMessage(1, "final v1", {}, { replaceMessageId: 10 });
    const second = client.sendMessage(1, "final v2", {}, { replaceMessageId: 10 });
    expect(await first).toMatchObject({ status: "superseded", reason: "coalesced" });
    server.release();
    await inFlight;
    const outcome = await second;
    await (outcome as OutboxDelivered<unknown>).followUp;
    expect(
      api.requests.filter((r) => r.method === "sendMessage").map((r) => r.params.text),
    ).toEqual(["final v2"]);
  });
});

describe("seed: a delete drops pending edits (client)", { timeout: 20_000 }, () => {
  it("deleteMessage drops the message's pending edit; only the in-flight edit and the delete are sent", async () => {
    const { server, api, client, inFlight: first } = await editInFlight("first");
    const second = client.editMessageText(1, 10, "second");
    const deleted = client.deleteMessage(1, 10);
    expect(await second).toMatchObject({ status: "superseded", reason: "dropped" });
    server.release();
    expect((await first).status).toBe("delivered");
    expect((await deleted).status).toBe("delivered");
    expect(api.methods).toEqual(["editMessageText", "deleteMessage"]);
  });

  it("deleteMessage drops every pending edit of the message, one a write keyed by writeKeys too", async () => {
    const { server, api, client, inFlight } = await editInFlight("first");
    const caption = client.write(
      "editMessageCaption",
      { chat_id: 1, message_id: 10, caption: "new" },
      { key: writeKeys.edit(10, "editMessageCaption"), priority: Priority.edit, idempotent: true },
    );
    const deleted = client.deleteMessage(1, 10);
    expect(client.outbox.snapshot().pending).toBe(1); // the delete alone
    expect(await caption).toMatchObject({ status: "superseded", reason: "dropped" });
    server.release();
    await inFlight;
    expect((await deleted).status).toBe("delivered");
    expect(api.methods).toEqual(["editMessageText", "deleteMessage"]);
  });

  it("a chat action replaces a pending one of its topic, not another topic's", async () => {
    const { server, api, client, inFlight } = await editInFlight("first");
    const topic = (thread: number) =>
      client.sendChatAction(1, "typing", { message_thread_id: thread });
    const [first, other, replacing] = [topic(5), topic(6), topic(5)];
    expect(await first).toMatchObject({ status: "superseded", reason: "coalesced" });
    server.release();
    await inFlight;
    expect([(await other).status, (await replacing).status]).toEqual(["delivered", "delivered"]);
    expect(api.requests.slice(1).map((r) => r.params.message_thread_id)).toEqual([5, 6]);
  });

  it("edits coalesce per message and a send pre-empts a pending edit (client)", async () => {
    const { server, api, client, inFlight: first } = await editInFlight("first");
    const second = client.editMessageText(1, 10, "second");
    const third = client.editMessageText(1, 10, "third");
    const send = client.sendMessage(1, "news");
    server.release();
    await eventually("the superseding edit and the send arrived", () =>
      expect(api.methods).toEqual(["editMessageText", "sendMessage", "editMessageText"]),
    );
    server.release();
    expect((await second).status).toBe("superseded");
    expect((await third).status).toBe("delivered");
    expect((await send).status).toBe("delivered");
    expect((await first).status).toBe("delivered");
    expect(api.requests.map((r) => r.params.text)).toEqual(["first", "news", "third"]);
  });
});
