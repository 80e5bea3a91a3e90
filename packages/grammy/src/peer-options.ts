// Option names grammY users bring from the plugins this package replaces (transformer-throttler,
// auto-retry, grammY runner, bot.start) get a hint naming what does that here.

/**
 * Throws a `TypeError` for the first key of `options` that `peers` knows, saying what to use
 * instead; other keys are left to `checkOptions`.
 */
export function checkPeerOptions(options: unknown, peers: Readonly<Record<string, string>>): void {
  if (typeof options !== "object" || options === null) return;
  for (const key of Object.keys(options)) {
    if (!Object.hasOwn(peers, key)) continue;
    throw new TypeError(`Unknown option \`${key}\` in \`options\` (use ${peers[key]})`);
  }
}
