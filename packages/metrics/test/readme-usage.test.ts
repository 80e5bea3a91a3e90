// The README's Usage block is the marked part of examples/prometheus.ts, verbatim, so it compiles
// under the package's strict tsconfig (typecheck includes examples/).

import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";

const read = (path: string) => readFileSync(new URL(path, import.meta.url), "utf8");

describe("README", () => {
  it("shows the example's code verbatim", () => {
    const readme = read("../README.md");
    const usage = readme.slice(readme.indexOf("## Usage"));
    const block = /```ts\n([\s\S]*?)```/.exec(usage)?.[1];
    const example = read("../examples/prometheus.ts");
    const marked = /\/\/ README:usage-start\n([\s\S]*?)\/\/ README:usage-end\n/.exec(example)?.[1];
    expect(marked).toBeDefined();
    expect(block).toBe(marked);
  });
});
