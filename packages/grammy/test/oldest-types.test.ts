// Code written against the package as published (its built types) compiles with the oldest
// grammY the peer range claims: examples/bot.ts and test/oldest/usage.ts, checked by tsc.

import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { isCi } from "@telepace/testing";
import ts from "typescript";
import { describe, expect, it } from "vitest";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const hasBuild = existsSync(join(root, "dist", "index.d.ts"));

describe.skipIf(!hasBuild && !isCi())("against the oldest grammY claimed", () => {
  it("a bot using streaming, run() and webhookCallback() type-checks", () => {
    expect(hasBuild, "build the package first: pnpm --filter @telepace/grammy... build").toBe(true);
    const configPath = join(root, "test", "oldest", "tsconfig.json");
    const config = ts.getParsedCommandLineOfConfigFile(
      configPath,
      {},
      {
        ...ts.sys,
        onUnRecoverableConfigFileDiagnostic: (diagnostic) => {
          throw new Error(ts.flattenDiagnosticMessageText(diagnostic.messageText, "\n"));
        },
      },
    );
    if (config === undefined) throw new Error(`cannot read ${configPath}`);
    const program = ts.createProgram(config.fileNames, config.options);
    const grammy = program
      .getSourceFiles()
      .find((file) => file.fileName.includes("/grammy/out/mod.d.ts"));
    expect(grammy?.fileName).toMatch(/grammy@1\.20\.2/);
    const errors = ts
      .getPreEmitDiagnostics(program)
      .map((diagnostic) => ts.flattenDiagnosticMessageText(diagnostic.messageText, "\n"));
    expect(errors).toEqual([]);
  }, 60_000);
});
