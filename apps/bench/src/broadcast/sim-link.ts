// The parent side of sim-process.ts: starts the sim's process once (TypeScript through tsx) and,
// for each run, asks it for a fresh sim, waits until its recipients exist, and asks it to chat,
// to stop, to report and to close that sim.

import { type ChildProcess, fork } from "node:child_process";
import { once } from "node:events";
import { fileURLToPath } from "node:url";
import { childExecArgv } from "../telepace-loading.js";
import type { SimClosed, SimCommand, SimConfig, SimReady, SimReport } from "./sim-process.js";

const SCRIPT = fileURLToPath(new URL("./sim-process.ts", import.meta.url));

/** One run's sim in the host's process. */
export interface SimLink extends SimReady {
  /** Its chatters start writing to the bot. */
  chat(): void;
  stopChat(): void;
  report(): Promise<SimReport>;
  /** Closes this sim; the process stays for the next. */
  close(): Promise<void>;
}

/** The sim's process: one sim at a time, a fresh one per {@link SimHost.open}. */
export interface SimHost {
  open(config: SimConfig): Promise<SimLink>;
  /** Ends the process (and the sim it still holds). */
  close(): Promise<void>;
}

/** Starts the sim's process and resolves once it takes commands. */
export async function startSimHost(): Promise<SimHost> {
  const child: ChildProcess = fork(SCRIPT, [], {
    execArgv: childExecArgv(),
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
  const send = (command: SimCommand): void => {
    child.send(command);
  };
  await next("host-ready");
  let open: SimLink | undefined;
  return {
    async open(config) {
      await open?.close();
      const ready = next<SimReady>("ready");
      send({ type: "open", config });
      let isClosed = false;
      const link: SimLink = {
        ...(await ready),
        chat: () => send({ type: "chat" }),
        stopChat: () => send({ type: "stop-chat" }),
        report() {
          const reply = next<SimReport>("report");
          send({ type: "report" });
          return reply;
        },
        async close() {
          if (isClosed) return;
          isClosed = true;
          if (open === link) open = undefined;
          const closed = next<SimClosed>("closed");
          send({ type: "close" });
          await closed;
        },
      };
      open = link;
      return link;
    },
    async close() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = once(child, "exit");
      send({ type: "exit" });
      const timer = setTimeout(() => child.kill("SIGKILL"), 5_000);
      await exited;
      clearTimeout(timer);
    },
  };
}
