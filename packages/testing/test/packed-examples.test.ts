// What the packed README check reads before it packs anything (scripts/readme-blocks.ts,
// scripts/packed-examples.ts, scripts/example-runs.ts): the first example under `## Usage`, the
// packages the Install section installs, the imports an example needs, and a run plan for the
// first example of every published package. The packing, installing and running itself is what
// `pnpm check:examples` does in CI.

import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";

const root = join(dirname(fileURLToPath(import.meta.url)), "..", "..", "..");

interface ReadmeBlocks {
  firstUsageExample(readme: string): { line: number; code: string; prelude: string } | undefined;
  installSpecs(readme: string): string[];
  packageNameOf(specifier: string): string;
}
interface PackedExamples {
  importsOf(code: string): string[];
}
interface ExampleRuns {
  runPlans: Readonly<Record<string, unknown>>;
}

// The scripts live outside this package: loaded by path, typed by the interfaces above.
const load = async <T>(name: string): Promise<T> =>
  (await import(join(root, "scripts", `${name}.ts`))) as T;
const blocks = await load<ReadmeBlocks>("readme-blocks");
const packed = await load<PackedExamples>("packed-examples");
const runs = await load<ExampleRuns>("example-runs");

const dir = join(root, "packages", "testing", ".examples", "packed-self-test");
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function readme(name: string, lines: readonly string[]): string {
  mkdirSync(dir, { recursive: true });
  const path = join(dir, name);
  writeFileSync(path, lines.join("\n"));
  return path;
}

describe("the packed README check's reading", () => {
  it("takes the first ```ts block under ## Usage, prelude and all", () => {
    const path = readme("usage.md", [
      "# pkg", // 1
      "```ts", // 2: before Usage, not an example
      "const before = 1;",
      "```",
      "## Usage", // 5
      "<!-- example: prelude",
      "declare const hidden: number;",
      "-->",
      "```ts", // 9
      "console.log(hidden);", // 10
      "```",
      "## API",
    ]);
    expect(blocks.firstUsageExample(path)).toMatchObject({
      line: 10,
      code: "console.log(hidden);",
      prelude: "declare const hidden: number;\n",
    });
    const none = readme("none.md", ["# pkg", "## Usage", "text", "## API", "```ts", "x;", "```"]);
    expect(blocks.firstUsageExample(none)).toBeUndefined();
  });

  it("reads the npm lines of ## Install: packages as written, without flags or comments", () => {
    const path = readme("install.md", [
      "## Install",
      "```sh",
      "npm i @telepace/metrics @opentelemetry/api",
      "pnpm add @telepace/metrics @opentelemetry/api",
      "# and an SDK (pnpm add / yarn add alike):",
      "npm i @opentelemetry/sdk-metrics@2.12.0   # the 2.x line runs on Node 20",
      "npm install -D @types/node-fetch@2",
      "```",
      "## Usage",
      "```sh",
      "npm i not-an-install-line",
      "```",
    ]);
    expect(blocks.installSpecs(path)).toEqual([
      "@telepace/metrics",
      "@opentelemetry/api",
      "@opentelemetry/sdk-metrics@2.12.0",
      "@types/node-fetch@2",
    ]);
  });

  it("names the package of a spec or an import", () => {
    expect(
      [
        "@opentelemetry/sdk-metrics@2.12.0",
        "grammy@1.46.0",
        "grammy",
        "@grammyjs/types",
        "@telepace/client/package.json",
        "lodash/fp",
      ].map(blocks.packageNameOf),
    ).toEqual([
      "@opentelemetry/sdk-metrics",
      "grammy",
      "grammy",
      "@grammyjs/types",
      "@telepace/client",
      "lodash",
    ]);
  });

  it("finds every module an example imports, type-only ones included", () => {
    const code = [
      'import type { Update } from "@grammyjs/types";',
      'import { createServer } from "node:http";',
      "import {",
      "  TelegramOutbox,",
      "  Priority,",
      '} from "@telepace/outbox";',
      'import "./side-effect.js";',
      'export { start } from "@telepace/bot-api-sim";',
      "const text = \"import x from 'not-an-import'\";",
    ].join("\n");
    expect(packed.importsOf(code)).toEqual([
      "@grammyjs/types",
      "node:http",
      "@telepace/outbox",
      "@telepace/bot-api-sim",
      "./side-effect.js",
    ]);
  });

  it("has a run plan for the first example of every published package", () => {
    const folders = readdirSync(join(root, "packages")).filter((folder) => {
      const manifest = JSON.parse(
        readFileSync(join(root, "packages", folder, "package.json"), "utf8"),
      );
      return manifest.private !== true;
    });
    expect(Object.keys(runs.runPlans).sort()).toEqual(folders.sort());
  });
});
