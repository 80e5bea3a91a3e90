import { Readable } from "node:stream";
import { ManualClock } from "@telepace/core";
import type { OutboxFailed } from "@telepace/outbox";
import { eventually } from "@telepace/testing";
import { describe, expect, it } from "vitest";
import { InputFile } from "../src/index.js";
import { apiError, message, ok } from "./support/bot-server.js";
import { connect } from "./support/client.js";

const bytes = Buffer.from("%PDF-1.7 fake document\r\n--not-a-boundary\r\n\u0000\u00ff", "latin1");

describe("TelegramClient: multipart uploads", { timeout: 20_000 }, () => {
  it("sendDocument(Buffer) uploads one part with a filename, other fields as text or JSON", async () => {
    const { server, client } = await connect((_request, res) => ok(res, message(5, 1, "")));
    const outcome = await client.sendDocument(
      1,
      new InputFile(bytes, "report.pdf", { contentType: "application/pdf" }),
      {
        caption: "the report",
        disable_notification: true,
        reply_markup: { inline_keyboard: [[{ text: "ok", callback_data: "ok" }]] },
      },
    );
    expect(outcome.status).toBe("delivered");
    const [request] = server.requests;
    expect(request?.headers["content-type"]).toMatch(/^multipart\/form-data; boundary=/);
    expect(request?.headers["content-length"]).toBe(String(request?.raw.byteLength));
    expect(request?.params).toEqual({
      chat_id: "1",
      caption: "the report",
      disable_notification: "true",
      reply_markup: JSON.stringify({ inline_keyboard: [[{ text: "ok", callback_data: "ok" }]] }),
    });
    expect(request?.files.document).toEqual({
      filename: "report.pdf",
      type: "application/pdf",
      data: bytes,
    });
  });

  it("accepts bare bytes, a Blob, a stream and a file_id string", async () => {
    const { server, client } = await connect((_request, res) => ok(res, message(5, 1, "")));
    await client.sendDocument(1, new Uint8Array([1, 2, 3]));
    await client.sendPhoto(1, new Blob([bytes], { type: "image/png" }));
    await client.sendDocument(1, Readable.from([Buffer.from("chunk1-"), Buffer.from("chunk2")]));
    await client.sendDocument(1, "BQACAgIAAxkBAAIB");
    const [raw, blob, stream, fileId] = server.requests;
    expect(raw?.files.document).toMatchObject({ filename: "file", data: Buffer.from([1, 2, 3]) });
    expect(blob?.files.photo).toMatchObject({ type: "image/png", data: bytes });
    expect(stream?.files.document?.data.toString()).toBe("chunk1-chunk2");
    // Unknown size: sent chunked, without Content-Length.
    expect(stream?.headers["transfer-encoding"]).toBe("chunked");
    expect(fileId?.headers["content-type"]).toBe("application/json");
    expect(fileId?.params).toEqual({ chat_id: 1, document: "BQACAgIAAxkBAAIB" });
  });

  it("nested files (InputMedia) are attached as attach://<name>", async () => {
    const { server, client } = await connect((_request, res) =>
      ok(res, [message(1, 1, ""), message(2, 1, "")]),
    );
    await client.write("sendMediaGroup", {
      chat_id: 1,
      media: [
        { type: "document", media: new InputFile(Buffer.from("a"), "a.txt") },
        { type: "document", media: new InputFile(Buffer.from("b"), "b.txt") },
      ],
    });
    const [request] = server.requests;
    expect(JSON.parse(String(request?.params.media))).toEqual([
      { type: "document", media: "attach://file0" },
      { type: "document", media: "attach://file1" },
    ]);
    expect(request?.files.file0?.data.toString()).toBe("a");
    expect(request?.files.file1).toMatchObject({ filename: "b.txt" });
  });

  it("after a 429 a repeatable source is uploaded again; a one-shot stream fails ERR_UPLOAD_NOT_REPEATABLE", async () => {
    const clock = new ManualClock();
    let first = true;
    const { server, client } = await connect(
      (_request, res) => {
        if (first) {
          first = false;
          return apiError(res, 429, "Too Many Requests: retry after 1", { retry_after: 1 });
        }
        ok(res, message(5, 1, ""));
      },
      { clock },
    );
    const factory = client.sendDocument(
      1,
      new InputFile(() => Readable.from([Buffer.from("again")]), "f.txt"),
    );
    await eventually("the outbox saw a 429", () =>
      expect(client.outbox.snapshot().counters.rateLimited).toBe(1),
    );
    await clock.advance(1_000);
    expect(await factory).toMatchObject({ status: "delivered", attempts: 2 });
    expect(server.requests.map((r) => r.files.document?.data.toString())).toEqual([
      "again",
      "again",
    ]);

    first = true;
    const once = client.sendDocument(1, Readable.from([Buffer.from("once")]));
    await eventually("the outbox saw 2 429s", () =>
      expect(client.outbox.snapshot().counters.rateLimited).toBe(2),
    );
    await clock.advance(1_000);
    const outcome = await once;
    expect(outcome).toMatchObject({ status: "failed", attempts: 2 });
    expect((outcome as OutboxFailed<Error>).error).toMatchObject({
      code: "ERR_UPLOAD_NOT_REPEATABLE",
    });
    expect(server.requests).toHaveLength(3);
  });

  it("InputFile rejects what it cannot upload", () => {
    expect(() => new InputFile(42 as never)).toThrow(TypeError);
    expect(() => new InputFile(Buffer.from("x"), "")).toThrow(
      new TypeError("Expected `filename` to be a non-empty string, got "),
    );
    expect(new InputFile(Readable.from([])).isRepeatable).toBe(false);
    expect(new InputFile(() => Readable.from([])).isRepeatable).toBe(true);
  });
});
