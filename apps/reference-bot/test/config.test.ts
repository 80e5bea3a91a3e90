// Configuration from the environment and the command line: where the bot talks to, the log level
// and the demo's crowd; every bad value is one ConfigError line that never carries the token.

import { resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { ConfigError, readConfig, USAGE } from "../src/config.js";
import { SHARED_USAGE } from "../src/shared-config.js";

const TOKEN = "123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw8";

function configError(run: () => unknown): ConfigError {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return error as ConfigError;
  }
  throw new Error("expected a ConfigError");
}

describe("readConfig", () => {
  it("without a token runs the embedded demo with its defaults", () => {
    expect(readConfig([], {})).toEqual({
      target: { kind: "embedded" },
      logLevel: "error",
      crowd: { durationS: 20, users: 6, groups: 2, seed: 1 },
      dataDir: undefined,
      metricsPort: undefined,
      ui: false,
      admins: [],
      broadcastRate: 30,
    });
    expect(readConfig([], { TELEGRAM_BOT_TOKEN: "  " })).toMatchObject({
      target: { kind: "embedded" },
    });
  });

  it("takes /broadcast admins from --admin or TELEPACE_ADMINS, and the broadcast pace", () => {
    expect(readConfig(["--admin", "7", "--admin", "8"], {})).toMatchObject({ admins: [7, 8] });
    expect(readConfig([], { TELEPACE_ADMINS: "7, 9" })).toMatchObject({ admins: [7, 9] });
    expect(readConfig(["--admin", "5"], { TELEPACE_ADMINS: "7" })).toMatchObject({ admins: [5] });
    expect(readConfig(["--broadcast-rate", "2"], {})).toMatchObject({ broadcastRate: 2 });
    expect(() => readConfig(["--admin", "x"], {})).toThrow(
      new ConfigError('--admin must be user ids (positive integers), got "x"'),
    );
    expect(() => readConfig([], { TELEPACE_ADMINS: "1,,2" })).toThrow(
      new ConfigError('TELEPACE_ADMINS must be user ids (positive integers), got ""'),
    );
    expect(() => readConfig(["--broadcast-rate", "31"], {})).toThrow(
      new ConfigError('--broadcast-rate must be an integer from 1 to 30, got "31"'),
    );
  });

  it("serves metrics only when --metrics-port or TELEPACE_METRICS_PORT names a port", () => {
    expect(readConfig([], { TELEGRAM_BOT_TOKEN: TOKEN })).toMatchObject({ metricsPort: undefined });
    expect(readConfig(["--metrics-port", "9464"], {})).toMatchObject({ metricsPort: 9464 });
    expect(readConfig(["--metrics-port=0"], {})).toMatchObject({ metricsPort: 0 });
    expect(readConfig([], { TELEPACE_METRICS_PORT: "9100" })).toMatchObject({ metricsPort: 9100 });
    expect(readConfig([], { TELEPACE_METRICS_PORT: "" })).toMatchObject({ metricsPort: undefined });
    expect(readConfig(["--metrics-port", "9200"], { TELEPACE_METRICS_PORT: "9100" })).toMatchObject(
      { metricsPort: 9200 },
    );
  });

  it.each([
    [["--metrics-port", "http"], {}, '--metrics-port must be a port from 0 to 65535, got "http"'],
    [["--metrics-port", "65536"], {}, '--metrics-port must be a port from 0 to 65535, got "65536"'],
    [["--metrics-port", " "], {}, '--metrics-port must be a port from 0 to 65535, got " "'],
    [
      [],
      { TELEPACE_METRICS_PORT: "-1" },
      'TELEPACE_METRICS_PORT must be a port from 0 to 65535, got "-1"',
    ],
  ])("rejects the metrics port in %j %j", (argv, env, message) => {
    expect(configError(() => readConfig(argv, env)).message).toBe(message);
  });

  it("keeps the journal in ./.telepace against the API, or where --data-dir or the env says", () => {
    expect(readConfig([], { TELEGRAM_BOT_TOKEN: TOKEN })).toMatchObject({
      dataDir: resolve(".telepace"),
    });
    expect(
      readConfig([], { TELEGRAM_BOT_TOKEN: TOKEN, TELEPACE_DATA_DIR: "/var/bot" }),
    ).toMatchObject({ dataDir: "/var/bot" });
    expect(
      readConfig(["--data-dir", "state"], { TELEGRAM_BOT_TOKEN: TOKEN, TELEPACE_DATA_DIR: "/x" }),
    ).toMatchObject({ dataDir: resolve("state") });
    // The demo makes a fresh temporary directory unless one is given.
    expect(readConfig(["--data-dir", "demo"], {})).toMatchObject({ dataDir: resolve("demo") });
    expect(() => readConfig(["--data-dir", ""], {})).toThrow("--data-dir must not be empty");
  });

  it("with a token targets the Bot API (or the given root, trailing slashes dropped)", () => {
    expect(readConfig([], { TELEGRAM_BOT_TOKEN: ` ${TOKEN}\n` })).toMatchObject({
      target: { kind: "api", token: TOKEN, apiRoot: "https://api.telegram.org" },
      logLevel: "info",
    });
    expect(
      readConfig([], { TELEGRAM_BOT_TOKEN: TOKEN, TELEGRAM_API_ROOT: "http://127.0.0.1:8081//" }),
    ).toMatchObject({ target: { kind: "api", apiRoot: "http://127.0.0.1:8081" } });
  });

  it("refuses a malformed token in one line that states the rule and does not contain it", () => {
    for (const token of [
      "not-a-token",
      "123456789:short",
      // What `telepace-bot-api-sim --token` refuses too, with the same words.
      "123456:TESTsecretABCdef",
      "bot123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw8",
      "123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDs aw8",
      "123456789;AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw8",
    ]) {
      const error = configError(() => readConfig([], { TELEGRAM_BOT_TOKEN: token }));
      expect(error.message).toBe(
        "TELEGRAM_BOT_TOKEN is malformed: expected <bot id>:<secret> as @BotFather issues it " +
          `(digits, a colon, then 30 or more of A-Z a-z 0-9 _ -), got ${token.length} characters`,
      );
      expect(error.message).not.toContain(token.trim());
      expect(error.message).not.toContain("AAHdqTcv");
      expect(error.message).not.toContain("TESTsecret");
    }
  });

  it("refuses an API root without a token, and one that is not an http(s) URL", () => {
    expect(
      configError(() => readConfig([], { TELEGRAM_API_ROOT: "http://127.0.0.1:8081" })).message,
    ).toBe("TELEGRAM_API_ROOT is set but TELEGRAM_BOT_TOKEN is not");
    expect(
      configError(() => readConfig([], { TELEGRAM_BOT_TOKEN: TOKEN, TELEGRAM_API_ROOT: "nowhere" }))
        .message,
    ).toBe('TELEGRAM_API_ROOT is not a URL: "nowhere"');
    const ftp = configError(() =>
      readConfig([], { TELEGRAM_BOT_TOKEN: TOKEN, TELEGRAM_API_ROOT: "ftp://example.com" }),
    );
    expect(ftp.message).toBe('TELEGRAM_API_ROOT must be an http(s) URL, got "ftp://example.com"');
    expect(ftp.message).not.toContain(TOKEN);
  });

  it("reads the demo's flags, also after the `--` that pnpm forwards", () => {
    const argv = ["--duration", "5", "--users", "20", "--groups", "0", "--seed", "42"];
    const expected = { durationS: 5, users: 20, groups: 0, seed: 42 };
    expect(readConfig(argv, {})).toMatchObject({ crowd: expected });
    expect(readConfig(["--", ...argv], {})).toMatchObject({ crowd: expected });
  });

  it("refuses bad flags naming the flag, the range and the value", () => {
    expect(configError(() => readConfig(["--users", "0"], {})).message).toBe(
      '--users must be an integer from 1 to 500, got "0"',
    );
    expect(configError(() => readConfig(["--duration", "1.5"], {})).message).toBe(
      '--duration must be an integer from 1 to 3600, got "1.5"',
    );
    expect(configError(() => readConfig(["--groups", "51"], {})).message).toBe(
      '--groups must be an integer from 0 to 50, got "51"',
    );
    expect(configError(() => readConfig(["--seed=-1"], {})).message).toBe(
      '--seed must be an integer from 0 to 2147483647, got "-1"',
    );
    expect(configError(() => readConfig(["--colour", "red"], {})).message).toMatch(
      /colour.*\(see --help\)$/,
    );
    expect(configError(() => readConfig(["extra"], {})).message).toMatch(/\(see --help\)$/);
  });

  it("takes the log level from the flag first, then LOG_LEVEL, in any case", () => {
    expect(readConfig([], { LOG_LEVEL: "DEBUG" })).toMatchObject({ logLevel: "debug" });
    expect(readConfig(["--log-level", "trace"], { LOG_LEVEL: "error" })).toMatchObject({
      logLevel: "trace",
    });
    expect(readConfig([], { LOG_LEVEL: "" })).toMatchObject({ logLevel: "error" });
    expect(configError(() => readConfig([], { LOG_LEVEL: "loud" })).message).toBe(
      'log level must be one of fatal, error, warn, info, debug, trace, silent, got "loud"',
    );
  });

  it("runs the demo for a person on the sim's chat page with --ui, never against the API", () => {
    expect(readConfig(["--", "--ui"], {})).toMatchObject({
      target: { kind: "embedded" },
      ui: true,
    });
    expect(configError(() => readConfig(["--ui"], { TELEGRAM_BOT_TOKEN: TOKEN })).message).toBe(
      "--ui runs the embedded sim's chat page: unset TELEGRAM_BOT_TOKEN",
    );
  });

  it("answers --help and -h with { help: true }, whatever else is set", () => {
    expect(readConfig(["--help"], {})).toEqual({ help: true });
    expect(readConfig(["-h"], { TELEGRAM_BOT_TOKEN: "bad" })).toEqual({ help: true });
  });

  it("aligns --help: every description starts in one column, in every section", () => {
    const lines = `${USAGE}\n\n${SHARED_USAGE}`.split("\n");
    // A row: two spaces, the name (single spaces inside), two or more spaces, the description.
    const rows = lines.filter((line) => /^ {2}\S/.test(line));
    const columns = rows.map((line) => /^ {2}\S+(?: \S+)* {2,}(?=\S)/.exec(line)?.[0].length);
    const continued = lines.filter((line) => /^ {3,}\S/.test(line));
    expect(rows).toHaveLength(24);
    expect(continued.length).toBeGreaterThanOrEqual(4);
    expect(new Set(columns)).toEqual(new Set([25]));
    expect(new Set(continued.map((line) => line.search(/\S/)))).toEqual(new Set([25]));
    for (const line of lines) expect(line.length).toBeLessThanOrEqual(100);
  });
});
