// A disk that really fills: a small tmpfs mounted in a private mount namespace (`unshare --mount`,
// root only), held by a child process and reached from the test through `/proc/<pid>/root`. When
// the child dies the namespace and the mount go with it, so nothing is left mounted on the host.

import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { mkdtemp, open, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { namespacesUnavailable } from "./helpers.js";

/** Why small-disk tests cannot run here, or `undefined` when they can. */
export const smallDiskUnavailable = (): string | undefined =>
  namespacesUnavailable("mount namespaces", [
    "--mount",
    "sh",
    "-c",
    "mount -t tmpfs -o size=64k probe /mnt",
  ]);

/** A mounted small tmpfs. */
export interface SmallDisk {
  /** The mount, as this process reaches it. */
  readonly path: string;
  /** Writes a filler file until the disk says ENOSPC; resolves the bytes written. */
  fill(): Promise<number>;
  /** Removes the filler file. */
  free(): Promise<void>;
  /** Unmounts (the holder dies, and its namespace with it) and removes the mount point. */
  close(): Promise<void>;
}

/** Mounts a tmpfs of `sizeBytes` (whole pages) in a private mount namespace. */
export async function mountSmallDisk(sizeBytes: number): Promise<SmallDisk> {
  const mountPoint = await mkdtemp(join(tmpdir(), "telepace-small-disk-"));
  const holder: ChildProcess = spawn(
    "unshare",
    [
      "--mount",
      "--propagation",
      "private",
      "sh",
      "-c",
      'mount -t tmpfs -o size="$1" small-disk "$0" && echo mounted && exec sleep 3600',
      mountPoint,
      String(sizeBytes),
    ],
    { stdio: ["ignore", "pipe", "pipe"] },
  );
  let stderr = "";
  holder.stderr?.on("data", (chunk) => {
    stderr += chunk;
  });
  await new Promise<void>((resolve, reject) => {
    holder.stdout?.on("data", () => resolve());
    holder.once("exit", (code) =>
      reject(new Error(`mounting a tmpfs failed (${code}): ${stderr}`)),
    );
  });
  // unshare execs sh, which execs sleep: one pid, inside the namespace.
  const path = `/proc/${holder.pid}/root${mountPoint}`;
  const filler = join(path, "filler");
  return {
    path,
    async fill() {
      const handle = await open(filler, "a");
      const chunk = Buffer.alloc(64 * 1024, 1);
      let written = 0;
      try {
        for (;;) {
          // A short write when nearly full; the one after it fails.
          written += (await handle.write(chunk)).bytesWritten;
        }
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== "ENOSPC") throw error;
      } finally {
        await handle.close();
      }
      return written;
    },
    async free() {
      await rm(filler, { force: true });
    },
    async close() {
      if (holder.exitCode === null && holder.signalCode === null) {
        const exited = once(holder, "exit");
        holder.kill("SIGKILL");
        await exited;
      }
      await rm(mountPoint, { recursive: true, force: true });
    },
  };
}
