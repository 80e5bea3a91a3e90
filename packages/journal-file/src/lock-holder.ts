// Who holds a journal lock: the process identity written into the lock file (pid, and on Linux the
// boot, the pid namespace and the start time that make a pid mean one process), read back and
// compared, so that a lock from a container that came back with the same pid is not mistaken for
// this process, and a pid from another namespace is not looked up here.

import { readFile, readlink } from "node:fs/promises";
import { hostname } from "node:os";

/** A process as a lock file names it. Fields other than `pid` are absent where unknown. */
export interface LockHolder {
  readonly pid: number;
  readonly host?: string;
  /** The kernel's boot id (`/proc/sys/kernel/random/boot_id`): a pid means nothing across boots. */
  readonly bootId?: string;
  /** `/proc/self/ns/pid`, e.g. `pid:[4026531836]`: a pid means nothing in another namespace. */
  readonly pidNamespace?: string;
  /** Start time in clock ticks since boot (`/proc/<pid>/stat`): tells a reused pid apart. */
  readonly startTime?: number;
  /** File name of the holder's liveness socket in the journal directory (see `liveness-socket`). */
  readonly socket?: string;
  /** Random per lock taken, so `release` removes only its own lock. */
  readonly token?: string;
}

/** The fields of this process; the same for every lock it takes. */
export type ProcessIdentity = Omit<LockHolder, "socket" | "token">;

async function readText(path: string): Promise<string | undefined> {
  try {
    return (await readFile(path, "utf8")).trim();
  } catch {
    return undefined;
  }
}

/** The pid and start time in a `/proc/<pid>/stat` text (the name in parentheses may hold spaces). */
function parseStat(text: string | undefined): { pid: number; startTime: number } | undefined {
  if (text === undefined) return undefined;
  const close = text.lastIndexOf(")");
  // Fields after the name start at field 3; the start time is field 22.
  const startTime = Number(text.slice(close + 2).split(" ")[19]);
  const pid = Number.parseInt(text, 10);
  return Number.isSafeInteger(startTime) && Number.isSafeInteger(pid)
    ? { pid, startTime }
    : undefined;
}

interface Local {
  readonly identity: ProcessIdentity;
  /**
   * Whether `/proc` shows this process's pid namespace: in a pid namespace with the parent's
   * `/proc` still mounted, `/proc/<pid>` would be some other process.
   */
  readonly isProcOurs: boolean;
}

async function readLocal(): Promise<Local> {
  const [bootId, pidNamespace, stat] = await Promise.all([
    readText("/proc/sys/kernel/random/boot_id"),
    readlink("/proc/self/ns/pid").catch(() => undefined),
    readText("/proc/self/stat"),
  ]);
  const own = parseStat(stat);
  const isProcOurs = own?.pid === process.pid;
  const identity: ProcessIdentity = {
    pid: process.pid,
    host: hostname(),
    ...(bootId === undefined ? {} : { bootId }),
    ...(pidNamespace === undefined ? {} : { pidNamespace }),
    // Ticks since boot, whichever namespace /proc shows: valid for this process either way.
    ...(own === undefined ? {} : { startTime: own.startTime }),
  };
  return { identity, isProcOurs };
}

let local: Promise<Local> | undefined;

/** This process's identity (read once). */
export async function thisProcess(): Promise<ProcessIdentity> {
  local ??= readLocal();
  return (await local).identity;
}

/** The start time of `pid` in this namespace, when `/proc` can tell it. */
export async function startTimeOf(pid: number): Promise<number | undefined> {
  local ??= readLocal();
  if (!(await local).isProcOurs) return undefined;
  const stat = parseStat(await readText(`/proc/${pid}/stat`));
  return stat?.pid === pid ? stat.startTime : undefined;
}

/** The lock file's text: one line of JSON. */
export function formatHolder(holder: LockHolder): string {
  return `${JSON.stringify(holder)}\n`;
}

const SOCKET_NAME = /^journal\.[0-9a-f]+\.sock$/;

function optionalString(value: unknown): string | undefined {
  return typeof value === "string" && value.length > 0 ? value : undefined;
}

/**
 * The holder a lock file's text names, or `undefined` when it names none (empty, torn, not ours).
 * A bare pid is the format of earlier versions.
 */
export function parseHolder(text: string): LockHolder | undefined {
  const trimmed = text.trim();
  if (/^[1-9]\d*$/.test(trimmed)) return { pid: Number(trimmed) };
  let value: unknown;
  try {
    value = JSON.parse(trimmed);
  } catch {
    return undefined;
  }
  if (typeof value !== "object" || value === null) return undefined;
  const fields = value as Record<string, unknown>;
  const { pid, startTime } = fields;
  if (!Number.isSafeInteger(pid) || (pid as number) < 1) return undefined;
  const host = optionalString(fields.host);
  const bootId = optionalString(fields.bootId);
  const pidNamespace = optionalString(fields.pidNamespace);
  const token = optionalString(fields.token);
  // Only a name of ours: a take-over removes the dead holder's socket file by this name.
  const socket = optionalString(fields.socket);
  return {
    pid: pid as number,
    ...(host === undefined ? {} : { host }),
    ...(bootId === undefined ? {} : { bootId }),
    ...(pidNamespace === undefined ? {} : { pidNamespace }),
    ...(Number.isSafeInteger(startTime) ? { startTime: startTime as number } : {}),
    ...(socket !== undefined && SOCKET_NAME.test(socket) ? { socket } : {}),
    ...(token === undefined ? {} : { token }),
  };
}

/** Whether both values are known and differ (an unknown one proves nothing). */
export function isKnownDifferent(
  a: string | number | undefined,
  b: string | number | undefined,
): boolean {
  return a !== undefined && b !== undefined && a !== b;
}

/** `process 12 on host-a`, plus its pid namespace when it is not this process's. */
export function describeHolder(holder: LockHolder, self: ProcessIdentity): string {
  const where = holder.host === undefined ? "" : ` on ${holder.host}`;
  const namespace = isKnownDifferent(holder.pidNamespace, self.pidNamespace)
    ? ` in another pid namespace (${holder.pidNamespace})`
    : "";
  return `process ${holder.pid}${where}${namespace}`;
}
