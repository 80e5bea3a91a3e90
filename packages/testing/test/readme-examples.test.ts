// The READMEs' usage blocks keep compiling (scripts/check-readme-examples.ts, run as CI runs it),
// and the checker points at the README line of a block that does not.

import { execFile } from "node:child_process";
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { runUsageExample } from "../src/index.js";

const root = join(dirname(fileURLToPath(import.meta.url)), "..", "..", "..");
const checked = [
  "core",
  "outbox",
  "client",
  "update-dispatch",
  "journal-file",
  "media-scheduler",
  "bot-api-sim",
  "grammy",
  "redis",
  "metrics",
  "testing",
  "reference-bot",
  "bench",
];

function check(...args: string[]): Promise<{ exitCode: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ["--import", "tsx", join(root, "scripts", "check-readme-examples.ts"), ...args],
      { cwd: root, timeout: 90_000 },
      (error, stdout, stderr) => {
        resolve({ exitCode: error === null ? 0 : Number(error.code ?? -1), stdout, stderr });
      },
    );
  });
}

// One checker run for both (a run spends seconds loading TypeScript and the packages' sources): the
// READMEs must add no error to the two the self-test README plants.
describe("check-readme-examples", () => {
  it(`type-checks the READMEs of ${checked.join(", ")} and points at failing lines`, async () => {
    const dir = join(root, "packages", "testing", ".examples", "check-self-test");
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, "same.ts"), 'export const same = "same";\n');
    writeFileSync(
      join(dir, "README.md"),
      [
        "# self test", //                                        1
        "", //                                                   2
        "<!-- example: prelude", //                              3
        "interface Clock { now(): number }", //                  4
        "declare const clock: Clock;", //                        5
        "-->", //                                                6
        "```ts", //                                              7
        "const now: number = clock.now();", //                   8
        "const wrong: string = now;", //                         9
        "```", //                                                10
        "", //                                                   11
        "<!-- example: fragment -->", //                         12
        "```ts", //                                              13
        "not( valid", //                                         14
        "```", //                                                15
        "", //                                                   16
        "<!-- example: file same.ts -->", //                     17
        "```ts", //                                              18
        'export const same = "different";', //                   19
        "```", //                                                20
      ].join("\n"),
    );
    try {
      const run = await check("--only", checked.join(","), join(dir, "README.md"));
      expect(run.stderr.trim().split("\n")).toEqual([
        "packages/testing/.examples/check-self-test/README.md:9:7: TS2322: Type 'number' is not assignable to type 'string'.",
        "packages/testing/.examples/check-self-test/README.md:19: differs from same.ts; copy the file into the README",
      ]);
      expect(run.stdout).toMatch(/^14 READMEs, \d+ blocks checked, 1 fragments skipped, 2 errors/);
      expect(run.exitCode).toBe(1);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 90_000);
});

describe("README usage programs", () => {
  it("core's runs", async () => {
    const run = await runUsageExample(join(root, "packages", "core"));
    expect(run).toEqual({
      exitCode: 0,
      stdout: "paused 1000 ms on the manual clock\n3 of 4 slots free\n",
      stderr: "",
    });
  });
});
