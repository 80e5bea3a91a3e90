import { describe, expect, it } from "vitest";
import { ConfigError } from "../src/config.js";
import { readSharedConfig } from "../src/shared-config.js";

describe("readSharedConfig", () => {
  it("takes --redis and --role out and leaves the rest", () => {
    expect(
      readSharedConfig(["--users", "3", "--redis", "redis://h:1", "--role=worker"], {}),
    ).toEqual({
      rest: ["--users", "3"],
      shared: { redisUrl: "redis://h:1", role: "worker" },
    });
    expect(readSharedConfig([], { REDIS_URL: "redis://h:2" })).toEqual({
      rest: [],
      shared: { redisUrl: "redis://h:2", role: "all" },
    });
    expect(readSharedConfig(["--seed", "1"], {})).toEqual({
      rest: ["--seed", "1"],
      shared: undefined,
    });
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
    expect(error(["--role", "worker"])).toBe("--role needs --redis <url> or REDIS_URL");
    expect(error(["--redis"])).toBe("--redis needs a value (see --help)");
    expect(error(["--redis", "http://user:secret@h"])).not.toContain("secret");
  });
});
