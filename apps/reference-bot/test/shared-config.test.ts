import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ConfigError } from "../src/config.js";
import { readSharedConfig } from "../src/shared-config.js";

const DEFAULTS = {
  role: "all",
  leaseMs: 1_500,
  renewMs: 300,
  pollerLeaseMs: 1_500,
  isStrict: false,
  warnings: [],
};

describe("readSharedConfig", () => {
  it("takes the shared-mode flags out and leaves the rest", () => {
    expect(
      readSharedConfig(["--users", "3", "--redis", "redis://h:1", "--role=worker"], {}),
    ).toEqual({
      rest: ["--users", "3"],
      shared: { ...DEFAULTS, redisUrl: "redis://h:1", role: "worker" },
    });
    expect(readSharedConfig([], { REDIS_URL: "redis://h:2" })).toEqual({
      rest: [],
      shared: { ...DEFAULTS, redisUrl: "redis://h:2" },
    });
    expect(readSharedConfig(["--seed", "1"], {})).toEqual({
      rest: ["--seed", "1"],
      shared: undefined,
    });
    expect(
      readSharedConfig(
        ["--lease-ms", "3000", "--poller-lease-ms=2000", "--redis-strict", "--users", "2"],
        { REDIS_URL: "redis://h:3" },
      ),
    ).toEqual({
      rest: ["--users", "2"],
      shared: {
        ...DEFAULTS,
        redisUrl: "redis://h:3",
        leaseMs: 3_000,
        renewMs: 600,
        pollerLeaseMs: 2_000,
        isStrict: true,
      },
    });
    expect(
      readSharedConfig(["--renew-ms", "250"], { REDIS_URL: "redis://h:3" }).shared?.renewMs,
    ).toBe(250);
  });

  it("reads the URL from a file (a mounted secret), and warns of a password on the command line", () => {
    const dir = mkdtempSync(join(tmpdir(), "telepace-redis-url-"));
    try {
      const file = join(dir, "redis-url");
      writeFileSync(file, "redis://:s3cret@h:4\n");
      expect(readSharedConfig(["--redis-url-file", file], {}).shared?.redisUrl).toBe(
        "redis://:s3cret@h:4",
      );
      expect(readSharedConfig([], { REDIS_URL_FILE: file }).shared?.redisUrl).toBe(
        "redis://:s3cret@h:4",
      );
      expect(readSharedConfig([], { REDIS_URL_FILE: file }).shared?.warnings).toEqual([]);
      // REDIS_URL wins over REDIS_URL_FILE; a flag wins over both.
      expect(
        readSharedConfig([], { REDIS_URL: "redis://h:5", REDIS_URL_FILE: file }).shared?.redisUrl,
      ).toBe("redis://h:5");
      const inArgs = readSharedConfig(["--redis", "redis://user:s3cret@h:6"], {}).shared;
      expect(inArgs?.warnings).toEqual([
        "--redis puts the Redis password in the process list, where `ps` shows it to every user of this machine; set REDIS_URL or --redis-url-file instead",
      ]);
      expect(readSharedConfig(["--redis", "redis://h:7"], {}).shared?.warnings).toEqual([]);
      expect(() => readSharedConfig(["--redis-url-file", join(dir, "missing")], {})).toThrow(
        `Cannot read --redis-url-file ${join(dir, "missing")} (ENOENT)`,
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("says what is wrong in one line, never echoing the URL", () => {
    const error = (argv: string[], env = {}) => {
      try {
        readSharedConfig(argv, env);
      } catch (caught) {
        expect(caught).toBeInstanceOf(ConfigError);
        return (caught as Error).message;
      }
      return "no error";
    };
    expect(error(["--role", "boss", "--redis", "redis://h"])).toBe(
      '--role must be one of all, poller, worker, got "boss"',
    );
    expect(error(["--role", "worker"])).toBe(
      "--role needs Redis: set REDIS_URL (or --redis-url-file <file>)",
    );
    expect(error(["--redis-strict"])).toBe(
      "--redis-strict needs Redis: set REDIS_URL (or --redis-url-file <file>)",
    );
    expect(error(["--redis"])).toBe("--redis needs a value (see --help)");
    expect(error(["--redis", "http://user:secret@h"])).not.toContain("secret");
    expect(error(["--lease-ms", "50"], { REDIS_URL: "redis://h" })).toBe(
      '--lease-ms must be an integer from 100 to 600000 (ms), got "50"',
    );
    expect(error(["--lease-ms", "1000", "--renew-ms", "1000"], { REDIS_URL: "redis://h" })).toBe(
      "--renew-ms (1000) must be below --lease-ms (1000)",
    );
  });
});
