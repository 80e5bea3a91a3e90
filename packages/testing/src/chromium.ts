// A real browser for page tests: Debian's chromium (never a downloaded one), started headless with
// the flags a closed network needs. Where it is missing, suites that need it fail under CI and are
// skipped (with a warning naming the install line) elsewhere — never passed silently.

import { accessSync, constants } from "node:fs";
import { afterAll, beforeAll, describe, it } from "vitest";
import { isCi } from "./ci.js";

/** How to install it, for messages. */
export const CHROMIUM_INSTALL_HINT = "apt-get update && apt-get install -y chromium";

/**
 * Flags for a headless chromium on a machine without the internet: no sandbox (CI runs as root),
 * no GPU, and none of the background connections (updates, sync, safe browsing) it would try.
 */
export const CHROMIUM_ARGS: readonly string[] = Object.freeze([
  "--no-sandbox",
  "--disable-gpu",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
  "--no-first-run",
]);

/** The chromium to run: `CHROMIUM_PATH`, else Debian's `/usr/bin/chromium`. */
export function chromiumPath(): string {
  return process.env.CHROMIUM_PATH || "/usr/bin/chromium";
}

/** Whether that chromium exists and may be executed. */
export function hasChromium(): boolean {
  try {
    accessSync(chromiumPath(), constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** What a launcher gets: where chromium is and its flags (playwright-core's launch takes both). */
export interface ChromiumLaunch {
  readonly executablePath: string;
  readonly args: string[];
}

/**
 * Like `describe`, with one browser for the whole suite: `launch` starts it (e.g.
 * `(options) => chromium.launch(options)` with playwright-core), `browser()` returns it inside
 * tests, and it is closed after the suite. Without chromium the suite fails under CI and is
 * skipped elsewhere, with a warning naming the install line.
 */
export function describeWithChromium<Browser extends { close(): Promise<void> }>(
  name: string,
  launch: (options: ChromiumLaunch) => Promise<Browser>,
  body: (browser: () => Browser) => void,
): void {
  if (!hasChromium()) {
    const missing = `chromium is not at ${chromiumPath()}, so "${name}" cannot run; install it (${CHROMIUM_INSTALL_HINT}) or set CHROMIUM_PATH`;
    if (isCi()) {
      describe(name, () => {
        it("needs chromium", () => {
          throw new Error(missing);
        });
      });
      return;
    }
    console.warn(`\n*** ${missing}. Skipped here; under CI it fails instead.\n`);
    describe.skip(name, () => body(() => undefined as never));
    return;
  }
  describe(name, () => {
    let running: Browser | undefined;
    beforeAll(async () => {
      running = await launch({ executablePath: chromiumPath(), args: [...CHROMIUM_ARGS] });
    }, 60_000);
    afterAll(async () => {
      await running?.close();
    });
    body(() => {
      if (running === undefined) throw new Error("chromium did not start");
      return running;
    });
  });
}
