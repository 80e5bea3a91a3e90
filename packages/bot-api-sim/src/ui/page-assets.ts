// The chat page's files: plain HTML, ES modules and CSS from the package's page folder (src/ui/page
// in the sources, dist/page once built), read once and served with a strict security policy.

import { readdirSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";

/** One file of the page, ready to send. */
export interface PageAsset {
  readonly body: Buffer;
  readonly contentType: string;
}

const CONTENT_TYPES: Readonly<Record<string, string>> = {
  html: "text/html; charset=utf-8",
  js: "text/javascript; charset=utf-8",
  css: "text/css; charset=utf-8",
  svg: "image/svg+xml",
};

/**
 * Headers of every page response: the page runs only its own scripts and styles, talks only to
 * this server, and cannot be framed by another site.
 */
export const PAGE_HEADERS: Readonly<Record<string, string>> = Object.freeze({
  "Content-Security-Policy":
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' blob: data:; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  "X-Content-Type-Options": "nosniff",
  "Referrer-Policy": "no-referrer",
  "Cache-Control": "no-cache",
});

// The bundle sits in dist/ with the page in dist/page/; the sources keep it beside this file.
const FOLDER = new URL("./page/", import.meta.url);

let assets: ReadonlyMap<string, PageAsset> | undefined;

/** The page's files by name (`index.html`, `app.js`…); only files of the page folder exist. */
export function pageAssets(): ReadonlyMap<string, PageAsset> {
  if (assets !== undefined) return assets;
  const loaded = new Map<string, PageAsset>();
  for (const entry of readdirSync(fileURLToPath(FOLDER), { withFileTypes: true })) {
    const extension = /\.([a-z]+)$/.exec(entry.name)?.[1];
    const contentType = extension === undefined ? undefined : CONTENT_TYPES[extension];
    if (!entry.isFile() || contentType === undefined) continue;
    loaded.set(entry.name, { body: readFileSync(new URL(entry.name, FOLDER)), contentType });
  }
  assets = loaded;
  return loaded;
}
