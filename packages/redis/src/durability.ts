// Whether a Redis keeps what it acknowledged: "store first, confirm after" tells Telegram an update
// was received once Redis has it, so a Redis that forgets (no append-only file, eviction at
// maxmemory) loses confirmed updates and the pacing state. Read from INFO, which managed Redis
// services allow, and refined by CONFIG GET where it is allowed (it is often disabled).

import type { Redis } from "ioredis";

/** How a Redis server keeps its data, and what that means for the guarantees. */
export interface RedisDurability {
  /**
   * `"aof"`: an append-only file (what was acknowledged survives a restart and a crash of Redis;
   * a crash of the machine loses up to `appendfsync`'s interval); `"rdb"`: snapshots only (a
   * crash loses everything since the last one); `"none"`: nothing is kept; `undefined`: INFO
   * said no append-only file and CONFIG could not tell whether snapshots are taken.
   */
  readonly persistence: "aof" | "rdb" | "none" | undefined;
  /** `always`, `everysec` or `no`, when CONFIG could be read. */
  readonly appendfsync: string | undefined;
  /** Bytes Redis may use (0: no limit). */
  readonly maxmemoryBytes: number | undefined;
  /** What Redis does at `maxmemoryBytes`; anything but `noeviction` may drop our keys. */
  readonly maxmemoryPolicy: string | undefined;
  /** Replicas connected to this primary (a failover to one loses what it had not received). */
  readonly replicas: number | undefined;
  /** What the guarantees lack here, one sentence each; empty when nothing was found wanting. */
  readonly problems: readonly string[];
  /** Settings that could not be read (CONFIG disabled or not allowed); they are not checked. */
  readonly unchecked: readonly string[];
}

/** The `field:value` lines of an INFO section. */
function fieldsOf(info: string): Map<string, string> {
  const fields = new Map<string, string>();
  for (const line of info.split(/\r?\n/)) {
    const colon = line.indexOf(":");
    if (colon > 0 && !line.startsWith("#")) fields.set(line.slice(0, colon), line.slice(colon + 1));
  }
  return fields;
}

/** A CONFIG GET value, or undefined when CONFIG is disabled or refused. */
async function configValue(client: Redis, name: string): Promise<string | undefined> {
  try {
    const reply = (await client.config("GET", name)) as unknown as string[];
    return reply[1];
  } catch (error) {
    if (error instanceof Error && error.name === "ReplyError") return undefined;
    throw error;
  }
}

/**
 * Reads how `client`'s server keeps its data. INFO failures reject (Redis unreachable, a refused
 * password); CONFIG failures only leave settings unchecked.
 */
export async function durabilityOf(client: Redis): Promise<RedisDurability> {
  const info = fieldsOf(await client.info());
  const [appendonly, save, appendfsync] = [
    await configValue(client, "appendonly"),
    await configValue(client, "save"),
    await configValue(client, "appendfsync"),
  ];
  const unchecked: string[] = [];
  if (appendonly === undefined) unchecked.push("save", "appendfsync");
  const hasAof = info.get("aof_enabled") === "1" || appendonly === "yes";
  const persistence = hasAof
    ? "aof"
    : save === undefined
      ? undefined
      : save.trim() === ""
        ? "none"
        : "rdb";
  const maxmemoryText = info.get("maxmemory");
  const maxmemoryBytes = maxmemoryText === undefined ? undefined : Number(maxmemoryText);
  const maxmemoryPolicy = info.get("maxmemory_policy");
  if (maxmemoryPolicy === undefined) unchecked.push("maxmemory-policy");
  const replicasText = info.get("connected_slaves");
  const problems: string[] = [];
  if (persistence === "none") {
    problems.push(
      "Redis keeps nothing on disk (appendonly no, no snapshots): a restart of Redis loses every stored update, though Telegram was told they arrived, and the groups' pacing",
    );
  } else if (persistence === "rdb") {
    problems.push(
      "Redis keeps only snapshots (appendonly no): a crash of Redis loses what was stored since the last snapshot, though Telegram was told it arrived",
    );
  } else if (persistence === undefined) {
    problems.push(
      "Redis has no append-only file (appendonly no): a crash of Redis loses what was stored since its last snapshot, if it takes any, though Telegram was told it arrived",
    );
  } else if (appendfsync === "no") {
    problems.push(
      "Redis writes its append-only file without fsync (appendfsync no): a crash of the machine loses the last seconds the system had not written",
    );
  }
  if (maxmemoryBytes !== undefined && maxmemoryBytes > 0 && maxmemoryPolicy !== "noeviction") {
    problems.push(
      `Redis may evict keys at maxmemory (maxmemory-policy ${maxmemoryPolicy ?? "unknown"}): stored updates, leases and pacing can vanish; set maxmemory-policy noeviction`,
    );
  }
  return Object.freeze({
    persistence,
    appendfsync,
    maxmemoryBytes,
    maxmemoryPolicy,
    replicas: replicasText === undefined ? undefined : Number(replicasText),
    problems: Object.freeze(problems),
    unchecked: Object.freeze(unchecked),
  });
}
