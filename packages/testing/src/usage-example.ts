// A README's Usage example run as a program, the way a user would run it: the first ```ts block
// under `## Usage`, compiled by tsx (so `await using` works on Node 20) in a child process.

import { execFile } from "node:child_process";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";

/** Options of {@link runUsageExample}. */
export interface RunUsageExampleOptions {
  /** Kill the program after this long, in ms of real time. @defaultValue 15000 */
  readonly timeoutMs?: number;
}

/** How the program ended. */
export interface UsageExampleRun {
  /** The exit code; `null` when it was killed (the timeout). */
  readonly exitCode: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/**
 * Runs the Usage example of `packageDir`'s README from `packageDir/.examples/usage.ts`, so its
 * imports resolve like the package's own (`@telepace/*` to source).
 *
 * @example
 * const run = await runUsageExample(join(import.meta.dirname, ".."));
 * expect(run).toEqual({ exitCode: 0, stdout: "Welcome!\n", stderr: "" });
 */
export async function runUsageExample(
  packageDir: string,
  options: RunUsageExampleOptions = {},
): Promise<UsageExampleRun> {
  const { timeoutMs = 15_000 } = options;
  const readme = readFileSync(join(packageDir, "README.md"), "utf8");
  const code = /^## Usage\n[\s\S]*?^```ts\n([\s\S]*?)^```$/m.exec(readme)?.[1];
  if (code === undefined) throw new Error(`${packageDir}/README.md has no \`\`\`ts block in Usage`);
  const file = join(packageDir, ".examples", "usage.ts");
  mkdirSync(join(packageDir, ".examples"), { recursive: true });
  writeFileSync(file, code);
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ["--import", "tsx", "--conditions=@telepace/source", file],
      { cwd: packageDir, timeout: timeoutMs, killSignal: "SIGKILL" },
      (error, stdout, stderr) => {
        const exitCode = error === null ? 0 : typeof error.code === "number" ? error.code : null;
        resolve({ exitCode, stdout, stderr });
      },
    );
  });
}
