// The parent side of sim-process.ts: starts the sim in its own process (TypeScript through tsx),
// waits until its recipients exist, and asks it to chat, to stop and to report.

import { type ChildProcess, fork } from "node:child_process";
import { once } from "node:events";
import { fileURLToPath } from "node:url";
import type { SimConfig, SimReady, SimReport } from "./sim-process.js";

const SCRIPT = fileURLToPath(new URL("./sim-process.ts", import.meta.url));

/**
 * Node flags of this area's children: tsx, and the packages as this process loads them (the
 * build, as users run it, unless the bench itself runs from source).
 */
export function childExecArgv(): string[] {
  const fromDist = import.meta.resolve("@telepace/bot-api-sim").includes("/dist/");
  return ["--import", "tsx", ...(fromDist ? [] : ["--conditions=@telepace/source"])];
}

/** A running sim process. */
export interface SimLink extends SimReady {
  /** Its chatters start writing to the bot. */
  chat(): void;
  stopChat(): void;
  report(): Promise<SimReport>;
  close(): Promise<void>;
}

/** Starts the sim process and resolves once its users and chats exist. */
export async function openSim(config: SimConfig): Promise<SimLink> {
  const child: ChildProcess = fork(SCRIPT, [], {
    execArgv: childExecArgv(),
    env: { ...process.env, TELEPACE_BROADCAST_SIM: JSON.stringify(config) },
    stdio: ["ignore", "inherit", "inherit", "ipc"],
  });
  const next = <T extends { type: string }>(type: string) =>
    new Promise<T>((resolve, reject) => {
      const onExit = (code: number | null) => reject(new Error(`the sim exited (${code})`));
      child.once("exit", onExit);
      child.on("message", function listener(message: T) {
        if (message.type !== type) return;
        child.off("message", listener);
        child.off("exit", onExit);
        resolve(message);
      });
    });
  const ready = await next<SimReady>("ready");
  return {
    ...ready,
    chat: () => child.send({ type: "chat" }),
    stopChat: () => child.send({ type: "stop-chat" }),
    report() {
      const reply = next<SimReport>("report");
      child.send({ type: "report" });
      return reply;
    },
    async close() {
      if (child.exitCode !== null) return;
      const exited = once(child, "exit");
      child.send({ type: "close" });
      const timer = setTimeout(() => child.kill("SIGKILL"), 5_000);
      await exited;
      clearTimeout(timer);
    },
  };
}
