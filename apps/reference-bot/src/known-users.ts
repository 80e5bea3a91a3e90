// The people a /broadcast reaches: every user who wrote to the bot in a private chat, in the order
// they first did, kept in an append-only file in the data directory (one id per line), so a
// position always names the same person and a broadcast that resumes after a crash reads the
// same list. The set of ids is also kept in memory, to add each person once.

import { createReadStream } from "node:fs";
import { appendFile, readFile } from "node:fs/promises";
import { join } from "node:path";
import { createInterface } from "node:readline";

/** The file of known users in a data directory. */
export const KNOWN_USERS_FILE = "known-users.log";

/** Users who wrote to the bot, by position. */
export class KnownUsers {
  readonly #file: string | undefined;
  readonly #ids: number[] = [];
  readonly #known = new Set<number>();
  #writes: Promise<void> = Promise.resolve();

  private constructor(file: string | undefined) {
    this.#file = file;
  }

  /** A list in memory only, gone with the process. */
  static inMemory(): KnownUsers {
    return new KnownUsers(undefined);
  }

  /** Reads the list in `dataDir` (none: in memory only, gone with the process). */
  static async open(dataDir: string | undefined): Promise<KnownUsers> {
    const users = new KnownUsers(
      dataDir === undefined ? undefined : join(dataDir, KNOWN_USERS_FILE),
    );
    if (users.#file === undefined) return users;
    const text = await readFile(users.#file, "utf8").catch((error: NodeJS.ErrnoException) => {
      if (error.code === "ENOENT") return "";
      throw error;
    });
    for (const line of text.split("\n")) {
      const id = Number(line);
      // A torn last line (a crash mid-append) is not an id: the user is added again when they write.
      if (line !== "" && Number.isSafeInteger(id) && id > 0) users.#remember(id);
    }
    return users;
  }

  /** How many users are known. */
  get count(): number {
    return this.#ids.length;
  }

  /** Adds a user who wrote to the bot (once). */
  add(userId: number): void {
    if (this.#known.has(userId)) return;
    this.#remember(userId);
    const file = this.#file;
    if (file === undefined) return;
    // Appended in order, not synced: a user lost in a crash is added again at their next message.
    this.#writes = this.#writes.then(() => appendFile(file, `${userId}\n`)).catch(() => {});
  }

  /**
   * The first `limit` users from position `from` on, for a broadcast's `recipients`: read from
   * the file when there is one (nothing is held for it), else from memory.
   */
  cursor(limit: number): (from: number) => AsyncIterable<number> {
    const file = this.#file;
    const ids = this.#ids;
    return async function* (from) {
      if (file === undefined) {
        for (let position = from; position < Math.min(limit, ids.length); position++) {
          yield ids[position] as number;
        }
        return;
      }
      const lines = createInterface({ input: createReadStream(file, "utf8"), crlfDelay: Infinity });
      let position = 0;
      try {
        for await (const line of lines) {
          const id = Number(line);
          if (line === "" || !Number.isSafeInteger(id) || id <= 0) continue;
          if (position >= limit) return;
          if (position++ >= from) yield id;
        }
      } finally {
        lines.close();
      }
    };
  }

  /** Waits for the appends so far (before a clean shutdown). */
  flush(): Promise<void> {
    return this.#writes;
  }

  #remember(userId: number): void {
    this.#known.add(userId);
    this.#ids.push(userId);
  }
}
