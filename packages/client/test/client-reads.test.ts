import { ManualClock } from "@telepace/core";
import { eventually } from "@telepace/testing";
import { describe, expect, it } from "vitest";
import { RetryAfterTooLongError, TelegramApiError } from "../src/index.js";
import { apiError, ok } from "./support/bot-server.js";
import { connect } from "./support/client.js";

const update = (id: number) => ({
  update_id: id,
  message: { message_id: id, date: 0, chat: { id: 1, type: "private" }, text: "hi" },
});

describe("TelegramClient: getUpdates", { timeout: 20_000 }, () => {
  it("long-polls with its parameters, bypassing the outbox", async () => {
    const { server, client } = await connect((_request, res) => ok(res, [update(10), update(11)]));
    const updates = await client.getUpdates({
      offset: 10,
      timeout: 30,
      allowed_updates: ["message"],
    });
    expect(updates.map((u) => u.update_id)).toEqual([10, 11]);
    expect(server.requests[0]?.params).toEqual({
      offset: 10,
      timeout: 30,
      allowed_updates: ["message"],
    });
    expect(client.outbox.snapshot().counters.enqueued).toBe(0);
  });

  it("sleeps out a 429 on the clock and polls again", async () => {
    const clock = new ManualClock();
    let calls = 0;
    const { server, client } = await connect(
      (_request, res) =>
        calls++ === 0
          ? apiError(res, 429, "Too Many Requests: retry after 2", { retry_after: 2 })
          : ok(res, [update(1)]),
      { clock },
    );
    const poll = client.getUpdates({ timeout: 0 });
    // The request's own timeout is a timer too: wait for the 429 sleep itself.
    await eventually("the retry sleeps on the clock", () =>
      expect(clock.nextTimerAt()).toBe(2_000),
    );
    expect(clock.pendingTimers).toBe(1);
    await clock.advance(1_999);
    expect(server.requests).toHaveLength(1);
    await clock.advance(1);
    expect(await poll).toHaveLength(1);
    expect(server.requests).toHaveLength(2);
  });

  it("the 429 sleep is cancellable and a retry_after over the cap throws", async () => {
    const clock = new ManualClock();
    const { client } = await connect(
      (request, res) =>
        apiError(res, 429, "Too Many Requests", {
          retry_after: request.params.offset === 1 ? 5 : 100_000,
        }),
      { clock },
    );
    const controller = new AbortController();
    const poll = client.getUpdates({ offset: 1 }, { signal: controller.signal });
    await eventually("the retry sleeps on the clock", () =>
      expect(clock.nextTimerAt()).toBe(5_000),
    );
    controller.abort(new Error("shutting down"));
    await expect(poll).rejects.toThrow("shutting down");
    expect(clock.pendingTimers).toBe(0);
    const capped = await client.getUpdates({ offset: 2 }).catch((e: unknown) => e);
    expect(capped).toBeInstanceOf(RetryAfterTooLongError);
    expect(capped).toMatchObject({ retryAfterMs: 100_000_000, maxRetryAfterMs: 300_000 });
  });

  it("its timeout is the long-poll timeout plus requestTimeoutMs", async () => {
    const clock = new ManualClock();
    const { server, client } = await connect(() => {}, { clock, requestTimeoutMs: 1_000 });
    const poll = client.getUpdates({ timeout: 50 });
    let settled = false;
    poll
      .catch(() => {})
      .finally(() => {
        settled = true;
      });
    await eventually("a request arrived", () => expect(server.requests).toHaveLength(1));
    await clock.advance(50_999);
    // The request's timeout is still armed, due one millisecond later.
    expect(clock.nextTimerAt()).toBe(51_000);
    expect(settled).toBe(false);
    await clock.advance(1);
    await expect(poll).rejects.toMatchObject({
      code: "ERR_NETWORK",
      failure: "timeout",
      method: "getUpdates",
    });
  });
});

describe("TelegramClient: files", { timeout: 20_000 }, () => {
  const content = Buffer.from("0123456789abcdefghij");

  async function fileServer(honourRange = true) {
    return connect((request, res) => {
      if (request.method === "getFile") {
        return ok(res, {
          file_id: "F1",
          file_unique_id: "U1",
          file_size: content.length,
          file_path: "documents/file 1.txt",
        });
      }
      if (request.method === "file:documents/file%201.txt") {
        const range = /bytes=(\d+)-(\d*)/.exec(String(request.headers.range ?? ""));
        if (range && honourRange) {
          const start = Number(range[1]);
          const end = range[2] ? Number(range[2]) : content.length - 1;
          res.writeHead(206, {
            "content-range": `bytes ${start}-${end}/${content.length}`,
            "content-length": String(end - start + 1),
          });
          res.end(content.subarray(start, end + 1));
          return;
        }
        res.writeHead(200, { "content-length": String(content.length) });
        res.end(content);
        return;
      }
      apiError(res, 404, "Not Found");
    });
  }

  async function read(body: AsyncIterable<Uint8Array>): Promise<string> {
    const chunks: Buffer[] = [];
    for await (const chunk of body) chunks.push(Buffer.from(chunk));
    return Buffer.concat(chunks).toString();
  }

  it("getFile then downloadFile streams the whole file", async () => {
    const { client } = await fileServer();
    const file = await client.getFile("F1");
    expect(file.file_path).toBe("documents/file 1.txt");
    const download = await client.downloadFile(file);
    expect(download).toMatchObject({
      statusCode: 200,
      isPartial: false,
      contentLength: 20,
      contentRange: undefined,
    });
    expect(await read(download.body)).toBe(content.toString());
  });

  it("downloads a byte range (206) and reports the range", async () => {
    const { server, client } = await fileServer();
    const download = await client.downloadFile("documents/file 1.txt", {
      range: { start: 5, end: 9 },
    });
    expect(download).toMatchObject({
      statusCode: 206,
      isPartial: true,
      contentRange: { start: 5, end: 9, totalSize: 20 },
    });
    expect(await read(download.body)).toBe("56789");
    expect(server.requests[0]?.headers.range).toBe("bytes=5-9");
    const open = await client.downloadFile("documents/file 1.txt", { range: { start: 15 } });
    expect(await read(open.body)).toBe("fghij");
  });

  it("a server that ignores Range answers 200 from byte 0, which isPartial=false tells", async () => {
    const { client } = await fileServer(false);
    const download = await client.downloadFile("documents/file 1.txt", { range: { start: 5 } });
    expect(download.isPartial).toBe(false);
    expect(await read(download.body)).toBe(content.toString());
  });

  it("a missing file is a TelegramApiError; bad arguments throw before any request", async () => {
    const { server, client } = await fileServer();
    await expect(client.downloadFile("documents/missing")).rejects.toBeInstanceOf(TelegramApiError);
    expect(() => client.downloadFile({ file_id: "x", file_unique_id: "y" })).toThrow(TypeError);
    expect(() => client.downloadFile("a", { range: { start: -1 } })).toThrow(
      new RangeError("Expected `range.start` to be an integer >= 0, got -1"),
    );
    expect(() => client.downloadFile("a", { range: { start: 5, end: 4 } })).toThrow(RangeError);
    expect(server.requests).toHaveLength(1);
  });

  it("aborting the signal destroys a download's body", async () => {
    const { client } = await connect((_request, res) => {
      res.writeHead(200);
      res.write("partial");
      // never ends
    });
    const controller = new AbortController();
    const download = await client.downloadFile("big.bin", { signal: controller.signal });
    const reading = read(download.body);
    controller.abort(new Error("cancelled by user"));
    await expect(reading).rejects.toThrow("cancelled by user");
  });
});
