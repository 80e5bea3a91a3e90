// Parsing commands as Telegram clients send them ("/work 5", "/work@my_bot 5"), and the callback
// data of a job's Cancel button.

import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { parseCommand } from "../src/commands.js";
import { truncateUtf16 } from "../src/update-router.js";
import { WorkJobs } from "../src/work-jobs.js";

const BOT = "telepace_sim_bot";

describe("parseCommand", () => {
  it("splits a command into its lower-case name and trimmed arguments", () => {
    expect(parseCommand("/start", BOT)).toEqual({ name: "start", args: "" });
    expect(parseCommand("/work 5", BOT)).toEqual({ name: "work", args: "5" });
    expect(parseCommand("/WORK   12  ", BOT)).toEqual({ name: "work", args: "12" });
    expect(parseCommand("  /file 64\n", BOT)).toEqual({ name: "file", args: "64" });
    expect(parseCommand("/echo line one\nline two", BOT)).toEqual({
      name: "echo",
      args: "line one\nline two",
    });
  });

  it("accepts a command addressed to this bot, in any case, and refuses one for another bot", () => {
    expect(parseCommand(`/work@${BOT} 5`, BOT)).toEqual({ name: "work", args: "5" });
    expect(parseCommand("/help@Telepace_Sim_Bot", BOT)).toEqual({ name: "help", args: "" });
    expect(parseCommand("/help@other_bot", BOT)).toBeUndefined();
    expect(parseCommand("/work@other_bot 5", BOT)).toBeUndefined();
  });

  it("treats anything else as plain text", () => {
    for (const text of [
      "hello",
      "",
      "/",
      "/ work",
      "a /work in the middle",
      "/work-5",
      "/wörk",
      `/${"x".repeat(33)}`,
      "/help@ab",
    ]) {
      expect(parseCommand(text, BOT), text).toBeUndefined();
    }
  });

  it("parses every well-formed command, and only for this bot", () => {
    const name = fc.stringMatching(/^[A-Za-z0-9_]{1,32}$/);
    const args = fc.string({ maxLength: 40 });
    const target = fc.option(fc.constantFrom(BOT, BOT.toUpperCase(), "other_bot"), {
      nil: undefined,
    });
    fc.assert(
      fc.property(name, target, args, (command, to, rest) => {
        const text = `/${command}${to === undefined ? "" : `@${to}`} ${rest}`;
        const parsed = parseCommand(text, BOT);
        if (to === "other_bot") expect(parsed).toBeUndefined();
        else expect(parsed).toEqual({ name: command.toLowerCase(), args: rest.trim() });
      }),
      { numRuns: 300 },
    );
  });
});

describe("WorkJobs.parseCancel", () => {
  it("reads the job id of a Cancel button and nothing else", () => {
    // Job ids are 8 random base64url characters, so a button of an earlier process never
    // names a job of this one.
    expect(WorkJobs.parseCancel("cancel:AbC-_123")).toBe("AbC-_123");
    expect(WorkJobs.parseCancel("cancel:00000000")).toBe("00000000");
    for (const data of [
      undefined,
      "",
      "cancel:",
      "cancel:1",
      "cancel:AbC-_1234",
      "cancel:AbC+/123",
      "stop:AbC-_123",
    ]) {
      expect(WorkJobs.parseCancel(data), String(data)).toBeUndefined();
    }
  });
});

describe("truncateUtf16", () => {
  it("keeps short text and never splits a surrogate pair", () => {
    expect(truncateUtf16("hello", 10)).toBe("hello");
    expect(truncateUtf16("abcdef", 3)).toBe("abc");
    // "😀" is two UTF-16 units; cutting after its first unit would leave a lone surrogate.
    expect(truncateUtf16("ab😀", 3)).toBe("ab");
    expect(truncateUtf16("ab😀c", 4)).toBe("ab😀");
  });
});
