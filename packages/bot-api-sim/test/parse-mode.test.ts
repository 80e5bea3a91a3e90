// The three parse modes and entity detection, unit by unit: offsets in UTF-16 units, errors with
// UTF-8 byte offsets, as Telegram reports them.

import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { detectEntities, formatText } from "../src/text/formatted-text.js";
import {
  EntityParseError,
  parseHtml,
  parseMarkdown,
  parseMarkdownV2,
} from "../src/text/parse-mode.js";

describe("HTML", () => {
  it("turns tags into entities", () => {
    expect(parseHtml("<b>bold</b> <i>it</i> <u>u</u> <s>s</s> <code>c</code>")).toEqual({
      text: "bold it u s c",
      entities: [
        { type: "bold", offset: 0, length: 4 },
        { type: "italic", offset: 5, length: 2 },
        { type: "underline", offset: 8, length: 1 },
        { type: "strikethrough", offset: 10, length: 1 },
        { type: "code", offset: 12, length: 1 },
      ],
    });
  });

  it("supports links, spoilers, blockquotes, custom emoji and pre with a language", () => {
    const parsed = parseHtml(
      '<a href="https://x.org/?a=1&amp;b=2">link</a><tg-spoiler>s</tg-spoiler><span class="tg-spoiler">p</span>' +
        '<blockquote expandable>q</blockquote><tg-emoji emoji-id="5368324170671202286">👍</tg-emoji>' +
        '<pre><code class="language-ts">let x;</code></pre>',
    );
    expect(parsed.text).toBe("linkspq👍let x;");
    expect(parsed.entities).toEqual([
      { type: "text_link", offset: 0, length: 4, url: "https://x.org/?a=1&b=2" },
      { type: "spoiler", offset: 4, length: 1 },
      { type: "spoiler", offset: 5, length: 1 },
      { type: "expandable_blockquote", offset: 6, length: 1 },
      { type: "custom_emoji", offset: 7, length: 2, custom_emoji_id: "5368324170671202286" },
      { type: "pre", offset: 9, length: 6, language: "ts" },
    ]);
  });

  it("decodes character references and keeps unknown ones literally", () => {
    expect(parseHtml("&lt;&gt;&amp;&quot;&#65;&#x42; &nbsp; & x").text).toBe('<>&"AB &nbsp; & x');
  });

  it("nests entities with outer ones first", () => {
    expect(parseHtml("<b>a<i>b</i></b>").entities).toEqual([
      { type: "bold", offset: 0, length: 2 },
      { type: "italic", offset: 1, length: 1 },
    ]);
  });

  it("measures offsets in UTF-16 code units", () => {
    expect(parseHtml("😀<b>x</b>").entities).toEqual([{ type: "bold", offset: 2, length: 1 }]);
  });

  it.each([
    ["<foo>x</foo>", 'Unsupported start tag "foo" at byte offset 0'],
    ["é<b>x", 'Can\'t find end tag corresponding to start tag "b"'],
    ["x</b>", "Unexpected end tag at byte offset 1"],
    ["é<b>x</i>", 'Unmatched end tag at byte offset 6, expected "</b>", found "</i>"'],
    ["a < b", "Unclosed start tag at byte offset 2"],
    ['<span class="x">y</span>', 'Tag "span" must have class "tg-spoiler" at byte offset 0'],
  ])("rejects %s", (input, message) => {
    expect(() => parseHtml(input)).toThrow(new EntityParseError(message));
  });
});

describe("MarkdownV2", () => {
  it("parses bold, italic, underline, strikethrough, spoiler, code, links", () => {
    const parsed = parseMarkdownV2("*b* _i_ __u__ ~s~ ||p|| `c` [l](https://x.org)");
    expect(parsed.text).toBe("b i u s p c l");
    expect(parsed.entities.map((e) => e.type)).toEqual([
      "bold",
      "italic",
      "underline",
      "strikethrough",
      "spoiler",
      "code",
      "text_link",
    ]);
  });

  it("parses pre blocks with a language and escapes", () => {
    expect(parseMarkdownV2("```js\nlet a = 1;\n```\\.")).toEqual({
      text: "let a = 1;\n.",
      entities: [{ type: "pre", offset: 0, length: 11, language: "js" }],
    });
  });

  it("parses block quotes line by line", () => {
    expect(parseMarkdownV2(">one\n>two\nafter")).toEqual({
      text: "one\ntwo\nafter",
      entities: [{ type: "blockquote", offset: 0, length: 7 }],
    });
  });

  it.each([
    ["Hello.", "Character '.' is reserved and must be escaped with the preceding '\\'"],
    ["a-b", "Character '-' is reserved and must be escaped with the preceding '\\'"],
    ["*open", "Can't find end of Bold entity at byte offset 0"],
    ["é _x", "Can't find end of Italic entity at byte offset 3"],
    ["`code", "Can't find end of Code entity at byte offset 0"],
  ])("rejects %s", (input, message) => {
    expect(() => parseMarkdownV2(input)).toThrow(new EntityParseError(message));
  });
});

describe("legacy Markdown", () => {
  it("parses *bold*, _italic_, `code`, ```pre``` and links without nesting", () => {
    const parsed = parseMarkdown("*b* _i_ `c` [l](https://x.org) ```py\nx```");
    expect(parsed.text).toBe("b i c l x");
    expect(parsed.entities).toEqual([
      { type: "bold", offset: 0, length: 1 },
      { type: "italic", offset: 2, length: 1 },
      { type: "code", offset: 4, length: 1 },
      { type: "text_link", offset: 6, length: 1, url: "https://x.org" },
      { type: "pre", offset: 8, length: 1, language: "py" },
    ]);
  });

  it("rejects an unclosed entity with its byte offset", () => {
    expect(() => parseMarkdown("ok *bold")).toThrow(
      new EntityParseError("Can't find end of the entity starting at byte offset 3"),
    );
  });
});

describe("formatText and detection", () => {
  it("trims and moves entities with the text", () => {
    expect(formatText({ text: "  <b>x</b>  ", parseMode: "HTML", entities: undefined })).toEqual({
      text: "x",
      entities: [{ type: "bold", offset: 0, length: 1 }],
    });
  });

  it("does not detect inside code", () => {
    expect(
      formatText({ text: "<code>/cmd</code> /cmd", parseMode: "html", entities: undefined })
        .entities,
    ).toEqual([
      { type: "code", offset: 0, length: 4 },
      { type: "bot_command", offset: 5, length: 4 },
    ]);
  });

  it("detects a command addressed to a bot and an email", () => {
    expect(detectEntities("/start@some_bot mail me: a.b@example.com", [])).toEqual([
      { type: "bot_command", offset: 0, length: 15 },
      { type: "email", offset: 25, length: 15 },
    ]);
  });

  it("never produces an entity outside the text (property)", () => {
    fc.assert(
      fc.property(
        fc.string({ maxLength: 60 }),
        fc.constantFrom("", "HTML", "MarkdownV2", "Markdown"),
        (text, mode) => {
          let result: ReturnType<typeof formatText> | undefined;
          try {
            result = formatText({ text, parseMode: mode, entities: undefined });
          } catch (error) {
            expect((error as { errorCode?: number }).errorCode).toBe(400);
            return;
          }
          for (const entity of result.entities) {
            expect(entity.offset).toBeGreaterThanOrEqual(0);
            expect(entity.length).toBeGreaterThan(0);
            expect(entity.offset + entity.length).toBeLessThanOrEqual(result.text.length);
          }
        },
      ),
      { numRuns: 300 },
    );
  });
});
