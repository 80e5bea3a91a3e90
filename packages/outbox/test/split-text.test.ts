import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { splitMessageText, visibleLength } from "../src/index.js";
import { splitCommitted } from "../src/streaming/split-text.js";

const texts = (source: string, format = {}, limit = 40) =>
  splitMessageText(source, format, { limit }).map((chunk) => chunk.text);

describe("splitMessageText", () => {
  it("keeps a text within the limit whole", () => {
    expect(texts("short")).toEqual(["short"]);
    expect(splitMessageText("x".repeat(4096))).toHaveLength(1);
    expect(splitMessageText("x".repeat(4097))).toHaveLength(2);
  });

  it("prefers a paragraph, then a line, then a word boundary", () => {
    const paragraph = `${"a".repeat(25)}\n\n${"b".repeat(8)} ${"c".repeat(20)}`;
    expect(texts(paragraph)[0]).toBe(`${"a".repeat(25)}\n\n`);
    const line = `${"a ".repeat(10)}\n${"b ".repeat(8)}${"c".repeat(20)}`;
    expect(texts(line)[0]).toBe(`${"a ".repeat(10)}\n`);
    const words = `${"word ".repeat(10)}`;
    expect(texts(words)).toEqual(["word ".repeat(8), "word ".repeat(2)]);
  });

  it("never cuts a surrogate pair", () => {
    const source = "😀".repeat(30); // 60 UTF-16 units
    const chunks = texts(source, {}, 41);
    expect(chunks.join("")).toBe(source);
    for (const chunk of chunks) {
      expect(chunk.length % 2).toBe(0);
      expect(chunk.length).toBeLessThanOrEqual(41);
    }
  });

  it("HTML: counts what shows, never cuts a tag or an entity, closes and reopens spans", () => {
    const source = `<b>${"bold ".repeat(10)}</b> &amp; <a href="https://x.y/z">link text</a>`;
    const chunks = texts(source, { parseMode: "HTML" }, 30);
    expect(chunks[0]).toBe(`<b>${"bold ".repeat(6)}</b>`);
    expect(chunks[1]?.startsWith("<b>bold ")).toBe(true);
    for (const chunk of chunks) {
      expect(visibleLength(chunk, { parseMode: "HTML" })).toBeLessThanOrEqual(30);
      expect(chunk).not.toMatch(/<[^>]*$/);
      expect((chunk.match(/<b>/g) ?? []).length).toBe((chunk.match(/<\/b>/g) ?? []).length);
    }
    expect(chunks.join("")).toContain("&amp;");
    expect(visibleLength("<i>a</i>&lt;", { parseMode: "HTML" })).toBe(2);
  });

  it("MarkdownV2: never cuts an escape, closes and reopens markers, keeps the link's URL", () => {
    const source = `*${"bold\\. ".repeat(8)}* [${"link ".repeat(10)}](https://e.x/a)`;
    const chunks = texts(source, { parseMode: "MarkdownV2" }, 30);
    expect(chunks[0]?.startsWith("*")).toBe(true);
    expect(chunks[0]?.endsWith("*")).toBe(true);
    for (const chunk of chunks) {
      expect(visibleLength(chunk, { parseMode: "MarkdownV2" })).toBeLessThanOrEqual(30);
      expect(chunk).not.toMatch(/(^|[^\\])\\$/);
    }
    const linked = chunks.filter((chunk) => chunk.includes("link"));
    expect(linked.length).toBeGreaterThan(1);
    for (const chunk of linked) expect(chunk).toContain("](https://e.x/a)");
  });

  it("MarkdownV2: a code block reopens with its language", () => {
    const source = `\`\`\`ts\n${"const x = 1;\n".repeat(6)}\`\`\``;
    const chunks = texts(source, { parseMode: "MarkdownV2" }, 40);
    expect(chunks.length).toBeGreaterThan(1);
    for (const chunk of chunks) {
      expect(chunk.startsWith("```ts\n")).toBe(true);
      expect(chunk.endsWith("```")).toBe(true);
    }
  });

  it("explicit entities: each message gets its own, shifted, and a cut avoids them", () => {
    const source = `${"plain ".repeat(5)}${"bold ".repeat(3)}${"tail ".repeat(4)}`;
    const boldAt = "plain ".repeat(5).length;
    const chunks = splitMessageText(
      source,
      { entities: [{ type: "bold", offset: boldAt, length: 15 }] },
      { limit: 40 },
    );
    expect(chunks.map((chunk) => chunk.text).join("")).toBe(source);
    const bold = chunks.flatMap((chunk) => chunk.entities ?? []);
    expect(bold).toHaveLength(1);
    expect(chunks[0]?.text).toBe("plain ".repeat(5));
    expect(chunks[1]?.entities).toEqual([{ type: "bold", offset: 0, length: 15 }]);
  });

  it("a text still streaming drops an unfinished tag and closes what is open", () => {
    const [chunk] = splitMessageText("<b>bold <i>it", { parseMode: "HTML" }, { isComplete: false });
    expect(chunk?.text).toBe("<b>bold <i>it</i></b>");
    const [cut] = splitMessageText(
      "<b>bold</b> <a hr",
      { parseMode: "HTML" },
      {
        isComplete: false,
      },
    );
    expect(cut?.text).toBe("<b>bold</b> ");
    const [trailing] = splitMessageText(
      "*bold \\",
      { parseMode: "MarkdownV2" },
      {
        isComplete: false,
      },
    );
    expect(trailing?.text).toBe("*bold *");
  });

  it("rejects a limit below 16", () => {
    expect(() => splitMessageText("x", {}, { limit: 3 })).toThrow(RangeError);
  });

  it("property: plain text is kept whole, in order, every chunk within the limit", () => {
    fc.assert(
      fc.property(
        fc.array(fc.oneof(fc.string(), fc.constantFrom("\n", "\n\n", " ", "😀", "é")), {
          maxLength: 200,
        }),
        fc.integer({ min: 16, max: 64 }),
        (parts, limit) => {
          const source = parts.join("");
          const chunks = texts(source, {}, limit);
          expect(chunks.join("")).toBe(source);
          for (const chunk of chunks) {
            expect(chunk.length).toBeLessThanOrEqual(limit);
            const last = chunk.charCodeAt(chunk.length - 1);
            if (chunk.length > 0) expect(last >= 0xd800 && last <= 0xdbff).toBe(false);
          }
        },
      ),
    );
  });

  it("property: HTML chunks are balanced and within the limit", () => {
    const word = fc.constantFrom("alpha", "beta", "&amp;", "😀", "\n");
    const span = fc
      .tuple(fc.constantFrom("b", "i", "u", "code"), fc.array(word, { maxLength: 12 }))
      .map(([tag, words]) => `<${tag}>${words.join(" ")}</${tag}>`);
    fc.assert(
      fc.property(fc.array(fc.oneof(word, span), { maxLength: 60 }), (parts) => {
        const source = parts.join(" ");
        const chunks = texts(source, { parseMode: "HTML" }, 32);
        for (const chunk of chunks) {
          expect(visibleLength(chunk, { parseMode: "HTML" })).toBeLessThanOrEqual(32);
          for (const tag of ["b", "i", "u", "code"]) {
            const opens = chunk.split(`<${tag}>`).length;
            expect(chunk.split(`</${tag}>`).length).toBe(opens);
          }
        }
        const strip = (html: string) => html.replace(/<[^>]+>/g, "");
        expect(chunks.map(strip).join("")).toBe(strip(source));
      }),
    );
  });

  it("property: plain text splits as the markup path splits text without markup", () => {
    // The plain path visits only the offsets a cut may take; the HTML path atomizes every
    // character. On text with no `<` or `&` they must agree, commitments and all.
    const unit = fc.constantFrom(
      "a",
      "b",
      " ",
      "\t",
      "\n",
      ".",
      ",",
      "😀",
      "é",
      "\ud800",
      "\udc00",
    );
    fc.assert(
      fc.property(
        fc.array(fc.oneof(unit, fc.stringMatching(/^[a-z ]{0,12}$/)), { maxLength: 120 }),
        fc.integer({ min: 16, max: 48 }),
        fc.array(fc.nat(400), { maxLength: 4 }),
        fc.nat(400),
        fc.boolean(),
        (parts, limit, ends, shownUpTo, isComplete) => {
          const source = parts.join("");
          const commitments = { ends: [...ends].sort((a, b) => a - b), shownUpTo };
          const options = { limit, isComplete };
          expect(splitCommitted(source, {}, options, commitments)).toEqual(
            splitCommitted(source, { parseMode: "HTML" }, options, commitments),
          );
        },
      ),
      { numRuns: 500 },
    );
  });
});
