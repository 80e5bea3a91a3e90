// Parsing of bot commands as Telegram clients send them: "/work 5", "/work@my_bot 5".

/** A parsed command: its name (lower case, without the slash) and the rest of the text. */
export interface Command {
  readonly name: string;
  readonly args: string;
}

/**
 * Parses `text` as a command for the bot `botUsername`. Returns undefined for plain text and for a
 * command addressed to another bot ("/start@other_bot").
 */
export function parseCommand(text: string, botUsername: string): Command | undefined {
  const match = /^\/([A-Za-z0-9_]{1,32})(?:@([A-Za-z0-9_]{3,64}))?(?:\s+([\s\S]*))?$/.exec(
    text.trim(),
  );
  if (match === null) return undefined;
  const [, name = "", target, args = ""] = match;
  if (target !== undefined && target.toLowerCase() !== botUsername.toLowerCase()) return undefined;
  return { name: name.toLowerCase(), args: args.trim() };
}

export const HELP_TEXT = `I am the telepace reference bot. Try:
/work [seconds] — a long job with live progress (Cancel button), ending in a final message
/file <KiB> — I send you a generated file of that size (1–20480 KiB)
/ask <question> — a long answer streamed as it is generated (Stop button in private chats)
/broadcast <text> — (admins) send a message to everyone who wrote to me, with live progress
Send me a document — I download it and tell you its size and SHA-256
Any other text — I echo it (in groups: mention me or reply to me)`;
