// What the package promises about itself: no undici (or any HTTP client of ours) in its
// dependency closure, one @grammyjs/types with grammY, the README's bot.ts is the checked file,
// and options are checked whole with hints for the plugins it replaces.

import { existsSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { telepace } from "../src/index.js";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");

interface Manifest {
  readonly name: string;
  readonly version: string;
  readonly dependencies?: Record<string, string>;
  readonly peerDependencies?: Record<string, string>;
}

function manifestOf(dir: string): Manifest {
  return JSON.parse(readFileSync(join(dir, "package.json"), "utf8")) as Manifest;
}

/** Every package a user installs with this one (dependencies and peers, transitively). */
function closure(): Map<string, Manifest> {
  const seen = new Map<string, Manifest>();
  const visit = (dir: string, isRoot: boolean): void => {
    const manifest = manifestOf(dir);
    const key = `${manifest.name}@${manifest.version}`;
    if (seen.has(key)) return;
    seen.set(key, manifest);
    const names = [
      ...Object.keys(manifest.dependencies ?? {}),
      ...(isRoot ? Object.keys(manifest.peerDependencies ?? {}) : []),
    ];
    const require = createRequire(join(dir, "package.json"));
    for (const name of names) {
      // Resolve the package directory from its main entry (some packages hide package.json).
      let entry: string;
      try {
        entry = require.resolve(`${name}/package.json`);
      } catch {
        entry = require.resolve(name);
      }
      let packageDir = dirname(entry);
      while (
        !existsSync(join(packageDir, "package.json")) ||
        manifestOf(packageDir).name !== name
      ) {
        packageDir = dirname(packageDir);
      }
      visit(packageDir, false);
    }
  };
  visit(root, true);
  return seen;
}

describe("the package", () => {
  it("has no undici in its dependency closure", () => {
    const names = [...closure().values()].map((manifest) => manifest.name);
    expect(names).toContain("grammy");
    expect(names).toContain("@telepace/outbox");
    expect(names).not.toContain("undici");
    expect(names).not.toContain("@telepace/client");
  });

  it("takes grammY's own @grammyjs/types, and grammY from 1.20.2 on", () => {
    // No range of its own to drift from grammY's exact pin: its types come from grammy/types.
    expect(manifestOf(root).dependencies).not.toHaveProperty("@grammyjs/types");
    const versions = [...closure().values()]
      .filter((manifest) => manifest.name === "@grammyjs/types")
      .map((manifest) => manifest.version);
    expect(versions).toEqual(["5.0.0"]);
    expect(manifestOf(root).peerDependencies).toEqual({ grammy: "^1.20.2" });
    // The oldest grammY the range claims is the one the grammy-oldest suite runs against.
    const oldest = manifestOf(join(root, "node_modules", "grammy-oldest"));
    expect(`^${oldest.version}`).toBe(manifestOf(root).peerDependencies?.grammy);
  });

  it("shows examples/bot.ts in the README, as it is", () => {
    const readme = readFileSync(join(root, "README.md"), "utf8");
    const example = readFileSync(join(root, "examples", "bot.ts"), "utf8");
    const blocks = [...readme.matchAll(/```ts\n([\s\S]*?)```/g)].map((match) => match[1]);
    expect(blocks).toContain(example);
  });
});

describe("telepace(options)", () => {
  it("names what replaces a throttler or auto-retry option", () => {
    expect(() => telepace({ global: { reservoir: 30 } } as never)).toThrow(
      "Unknown option `global` in `options` (use `globalRps`",
    );
    expect(() => telepace({ maxRetryAttempts: 3 } as never)).toThrow(
      "Unknown option `maxRetryAttempts` in `options` (did you mean `maxAttempts`?)",
    );
    expect(() => telepace({ maxInFlite: 3 } as never)).toThrow(/did you mean `maxInFlight`/);
    expect(() => telepace({ maxInFlight: 0 })).toThrow(RangeError);
  });

  it("exposes the outbox, its snapshot and close", async () => {
    const pace = telepace();
    expect(pace.snapshot()).toMatchObject({ state: "open", pending: 0 });
    expect(pace.outbox.isClosed).toBe(false);
    await pace[Symbol.asyncDispose]();
    expect(pace.snapshot().state).toBe("closed");
  });
});
