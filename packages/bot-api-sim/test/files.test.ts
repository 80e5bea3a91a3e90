// Files: multipart uploads with sendDocument/sendPhoto (attach://, file_id reuse, limits),
// getFile, and downloads from /file/bot<token>/<path> with Range/206/416 that can be turned off.

import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type BotApiSim, BotApiSimError, start } from "../src/index.js";
import { call, PNG_1X1, pngOfSize, raw } from "./helpers.js";

let sim: BotApiSim;

beforeAll(async () => {
  sim = await start({ rateLimits: false, maxRequestBytes: 60 * 1024 * 1024 });
});
afterAll(() => sim.close());

function privateChat() {
  const user = sim.users.create();
  return { user, chat: sim.chats.createPrivate(user) };
}

const CONTENT = Buffer.from("0123456789abcdefghij");

async function upload(chatId: number, bytes: Uint8Array = CONTENT, fileName = "report.pdf") {
  return call(
    sim,
    "sendDocument",
    { chat_id: chatId, caption: "the report" },
    {
      files: { document: { bytes, fileName } },
    },
  );
}

async function pathOf(fileId: string): Promise<string> {
  return (await call(sim, "getFile", { file_id: fileId })).body.result.file_path;
}

describe("sendDocument", () => {
  it("stores an uploaded part and returns the document with name, type and size", async () => {
    const { chat } = privateChat();
    const reply = await upload(chat.id);
    expect(reply.status).toBe(200);
    expect(reply.body.result).toMatchObject({
      caption: "the report",
      document: {
        file_name: "report.pdf",
        mime_type: "application/pdf",
        file_size: CONTENT.length,
      },
    });
    expect(reply.body.result.document.file_id).toEqual(expect.any(String));
    expect(reply.body.result.document.file_unique_id).toEqual(expect.any(String));
    expect(sim.counters().bytesUploaded).toBeGreaterThanOrEqual(CONTENT.length);
  });

  it("resolves attach://<name> to another file part", async () => {
    const { chat } = privateChat();
    const reply = await call(
      sim,
      "sendDocument",
      { chat_id: chat.id, document: "attach://blob" },
      {
        files: { blob: { bytes: CONTENT, fileName: "notes.txt" } },
      },
    );
    expect(reply.body.result.document).toMatchObject({
      file_name: "notes.txt",
      mime_type: "text/plain",
    });
  });

  it("re-sends an existing file by file_id without a new upload", async () => {
    const { chat } = privateChat();
    const first = (await upload(chat.id)).body.result.document;
    const again = await call(sim, "sendDocument", { chat_id: chat.id, document: first.file_id });
    expect(again.body.result.document).toEqual(first);
  });

  it("answers Telegram's errors for missing, foreign and mismatched files", async () => {
    const { chat } = privateChat();
    const photo = (
      await call(
        sim,
        "sendPhoto",
        { chat_id: chat.id },
        { files: { photo: { bytes: PNG_1X1, fileName: "p.png" } } },
      )
    ).body.result.photo[0];
    const cases: Array<[Record<string, unknown>, string]> = [
      [{}, "Bad Request: there is no document in the request"],
      [{ document: "attach://nothing" }, "Bad Request: there is no document in the request"],
      [{ document: "https://example.org/a.pdf" }, "Bad Request: failed to get HTTP URL content"],
      [{ document: "not-a-file-id" }, "Bad Request: wrong file identifier/HTTP URL specified"],
      [{ document: photo.file_id }, "Bad Request: type of file mismatch"],
    ];
    for (const [params, description] of cases) {
      const reply = await call(sim, "sendDocument", { chat_id: chat.id, ...params });
      expect(reply.body.description).toBe(description);
    }
    const empty = await upload(chat.id, new Uint8Array(0));
    expect(empty.body.description).toBe("Bad Request: file must be non-empty");
  });

  it("refuses an upload above 50 MB with 413", async () => {
    const { chat } = privateChat();
    const reply = await upload(chat.id, Buffer.alloc(50 * 1024 * 1024 + 1, 1), "big.bin");
    expect(reply.status).toBe(413);
    expect(reply.body.description).toBe("Request Entity Too Large");
    expect(sim.transcript(chat).messages).toEqual([]);
  }, 30_000);
});

describe("sendPhoto", () => {
  it("reads the image size and returns a PhotoSize", async () => {
    const { chat } = privateChat();
    const reply = await call(
      sim,
      "sendPhoto",
      { chat_id: chat.id },
      {
        files: { photo: { bytes: pngOfSize(640, 480), fileName: "a.png" } },
      },
    );
    expect(reply.body.result.photo).toEqual([
      expect.objectContaining({ width: 640, height: 480, file_size: PNG_1X1.length }),
    ]);
    expect(await pathOf(reply.body.result.photo[0].file_id)).toMatch(/^photos\/file_\d+\.png$/);
  });

  it("refuses what is not an image, and impossible dimensions", async () => {
    const { chat } = privateChat();
    const text = await call(
      sim,
      "sendPhoto",
      { chat_id: chat.id },
      {
        files: { photo: { bytes: Buffer.from("hello"), fileName: "a.png" } },
      },
    );
    expect(text.body.description).toBe("Bad Request: IMAGE_PROCESS_FAILED");
    const huge = await call(
      sim,
      "sendPhoto",
      { chat_id: chat.id },
      {
        files: { photo: { bytes: pngOfSize(9000, 2000), fileName: "a.png" } },
      },
    );
    expect(huge.body.description).toBe("Bad Request: PHOTO_INVALID_DIMENSIONS");
  });
});

describe("getFile", () => {
  it("returns file_id, file_unique_id, size and a path", async () => {
    const { chat } = privateChat();
    const document = (await upload(chat.id)).body.result.document;
    const reply = await call(sim, "getFile", { file_id: document.file_id });
    expect(reply.body.result).toEqual({
      file_id: document.file_id,
      file_unique_id: document.file_unique_id,
      file_size: CONTENT.length,
      file_path: expect.stringMatching(/^documents\/file_\d+\.pdf$/),
    });
  });

  it("tells malformed, unknown and missing ids apart", async () => {
    expect((await call(sim, "getFile", {})).body.description).toBe(
      "Bad Request: file_id not specified",
    );
    expect((await call(sim, "getFile", { file_id: "abc" })).body.description).toBe(
      "Bad Request: invalid file_id",
    );
    expect(
      (await call(sim, "getFile", { file_id: "BQACAgIAAxkBAAAAAAAAAAAAAAAAAAAAAAAA" })).body
        .description,
    ).toBe("Bad Request: wrong file_id or the file is temporarily unavailable");
  });

  it("refuses files above 20 MB", async () => {
    const { user, chat } = privateChat();
    const sent = sim.sendDocument(user, chat, {
      bytes: Buffer.alloc(20 * 1024 * 1024 + 1),
      fileName: "big.zip",
    });
    const fileId = (sent as { document: { file_id: string } }).document.file_id;
    expect((await call(sim, "getFile", { file_id: fileId })).body.description).toBe(
      "Bad Request: file is too big",
    );
  });
});

describe("downloads", () => {
  let path: string;

  beforeAll(async () => {
    const { chat } = privateChat();
    path = await pathOf((await upload(chat.id)).body.result.document.file_id);
  });

  const download = (range?: string, method: "GET" | "HEAD" = "GET", token = sim.token) =>
    raw(sim, `/file/bot${token}/${path}`, {
      method,
      ...(range === undefined ? {} : { headers: { range } }),
    });

  it("serves the whole file with Accept-Ranges", async () => {
    const before = sim.counters().bytesServed;
    const reply = await download();
    expect(reply.status).toBe(200);
    expect(reply.text).toBe(CONTENT.toString());
    expect(reply.headers["accept-ranges"]).toBe("bytes");
    expect(reply.headers["content-length"]).toBe(String(CONTENT.length));
    expect(sim.counters().bytesServed - before).toBe(CONTENT.length);
  });

  it.each([
    ["bytes=2-5", "2345", "bytes 2-5/20"],
    ["bytes=15-", "fghij", "bytes 15-19/20"],
    ["bytes=-3", "hij", "bytes 17-19/20"],
    ["bytes=18-100", "ij", "bytes 18-19/20"],
  ])("answers %s with 206", async (range, body, contentRange) => {
    const reply = await download(range);
    expect(reply.status).toBe(206);
    expect(reply.text).toBe(body);
    expect(reply.headers["content-range"]).toBe(contentRange);
  });

  it("answers 416 for a range past the end", async () => {
    const reply = await download("bytes=20-");
    expect(reply.status).toBe(416);
    expect(reply.headers["content-range"]).toBe("bytes */20");
  });

  it("sends the whole file for malformed or multiple ranges", async () => {
    expect((await download("bytes=0-1,4-5")).status).toBe(200);
    expect((await download("items=0-1")).status).toBe(200);
  });

  it("ignores Range when range requests are switched off", async () => {
    sim.setRangeRequests(false);
    try {
      const reply = await download("bytes=2-5");
      expect(reply.status).toBe(200);
      expect(reply.text).toBe(CONTENT.toString());
      expect(reply.headers["accept-ranges"]).toBeUndefined();
    } finally {
      sim.setRangeRequests(true);
    }
  });

  it("answers HEAD with headers only", async () => {
    const reply = await download(undefined, "HEAD");
    expect(reply.status).toBe(200);
    expect(reply.headers["content-length"]).toBe(String(CONTENT.length));
    expect(reply.text).toBe("");
  });

  it("answers 401 for a bad token and 404 for an unknown path", async () => {
    expect((await download(undefined, "GET", "1:nope")).status).toBe(401);
    const missing = await raw(sim, `/file/bot${sim.token}/documents/file_999999.pdf`);
    expect(missing.body).toEqual({ ok: false, error_code: 404, description: "Not Found" });
  });

  it("serves what a user sent, byte for byte", async () => {
    const { user, chat } = privateChat();
    const bytes = Buffer.from(Array.from({ length: 4096 }, (_, i) => i % 256));
    const sent = sim.sendDocument(user, chat, { bytes, fileName: "data.bin" });
    const fileId = (sent as { document: { file_id: string } }).document.file_id;
    const exact = await fetch(`${sim.apiRoot}/file/bot${sim.token}/${await pathOf(fileId)}`);
    expect(Buffer.from(await exact.arrayBuffer()).equals(bytes)).toBe(true);
  });
});

describe("storage bound", () => {
  it("refuses uploads beyond maxFileStorageBytes with a clear error", async () => {
    const small = await start({ rateLimits: false, maxFileStorageBytes: 1000 });
    try {
      const user = small.users.create();
      const chat = small.chats.createPrivate(user);
      const bot = await call(
        small,
        "sendDocument",
        { chat_id: chat.id },
        {
          files: { document: { bytes: Buffer.alloc(1500), fileName: "a.bin" } },
        },
      );
      expect(bot.status).toBe(413);
      expect(bot.body.description).toMatch(/file storage is full .*maxFileStorageBytes/);
      expect(() => small.sendDocument(user, chat, { bytes: Buffer.alloc(1500) })).toThrow(
        BotApiSimError,
      );
      expect(() => small.sendDocument(user, chat, { bytes: Buffer.alloc(1500) })).toThrow(
        /maxFileStorageBytes/,
      );
      expect(small.snapshot().storedFileBytes).toBe(0);
      small.sendDocument(user, chat, { bytes: Buffer.alloc(900) });
      expect(small.snapshot().storedFileBytes).toBe(900);
    } finally {
      await small.close();
    }
  });
});
