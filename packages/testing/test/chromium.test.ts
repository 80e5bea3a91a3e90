import { afterEach, describe, expect, it } from "vitest";
import { isCi } from "../src/ci.js";
import { CHROMIUM_ARGS, chromiumPath, hasChromium } from "../src/index.js";

const saved = { path: process.env.CHROMIUM_PATH, ci: process.env.CI };

afterEach(() => {
  for (const [name, value] of [
    ["CHROMIUM_PATH", saved.path],
    ["CI", saved.ci],
  ] as const) {
    if (value === undefined) delete process.env[name];
    else process.env[name] = value;
  }
});

describe("chromium", () => {
  it("is Debian's /usr/bin/chromium unless CHROMIUM_PATH names another", () => {
    delete process.env.CHROMIUM_PATH;
    expect(chromiumPath()).toBe("/usr/bin/chromium");
    process.env.CHROMIUM_PATH = "/opt/chromium/chrome";
    expect(chromiumPath()).toBe("/opt/chromium/chrome");
  });

  it("is missing when the path is not an executable file", () => {
    process.env.CHROMIUM_PATH = "/nonexistent/chromium";
    expect(hasChromium()).toBe(false);
    process.env.CHROMIUM_PATH = process.execPath;
    expect(hasChromium()).toBe(true);
  });

  it("starts without a sandbox and without background connections", () => {
    expect(CHROMIUM_ARGS).toEqual(
      expect.arrayContaining(["--no-sandbox", "--disable-background-networking"]),
    );
  });

  it("counts CI as set for any value but empty and false", () => {
    for (const [value, expected] of [
      ["true", true],
      ["1", true],
      ["", false],
      ["false", false],
    ] as const) {
      process.env.CI = value;
      expect(isCi(), value).toBe(expected);
    }
    delete process.env.CI;
    expect(isCi()).toBe(false);
  });
});
