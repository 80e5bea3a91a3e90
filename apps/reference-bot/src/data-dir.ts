// The journal's directory, looked at before the journal opens it: a file in its place (or in the
// place of one of its parents) is said plainly — "not a directory" — rather than as the EEXIST or
// ENOTDIR that creating the directory would end in.

import { stat } from "node:fs/promises";

/** Why `dataDir` cannot hold a journal, or `undefined` when it can be (or can be created). */
export async function dataDirProblem(dataDir: string): Promise<string | undefined> {
  try {
    const stats = await stat(dataDir);
    return stats.isDirectory() ? undefined : "it is not a directory";
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    // ENOENT: it does not exist yet, and the journal creates it. Anything else is the journal's
    // to report as it tries (permissions, a read-only disk).
    return code === "ENOTDIR" ? "a part of its path is a file, not a directory" : undefined;
  }
}
