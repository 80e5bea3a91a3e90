// /broadcast <text>: refused to everyone but the admins; for an admin, one message to everyone who
// wrote to the bot, with a progress message that ends in the outcomes; and a broadcast the bot
// was stopped in the middle of goes on when the bot starts again on the same data directory.

import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import type { Chat, User } from "@grammyjs/types";
import { type BotApiSim, start } from "@telepace/bot-api-sim";
import { afterEach, describe, expect, it } from "vitest";
import { createLogger } from "../src/logger.js";
import { ReferenceBot } from "../src/reference-bot.js";
import {
  E2E_TIMEOUT_MS,
  eventually,
  MemoryLog,
  REPLY_TIMEOUT_MS,
  replyTo,
  SCALED_OUTBOX,
  TIME_SCALE,
  textOf,
} from "./harness.js";

const FINAL = /^Broadcast done: (\d+) people — (.*)\.$/;
const cleanup: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const close of cleanup.splice(0).reverse()) await close();
});

interface Person {
  readonly user: User;
  readonly chat: Chat;
}

async function world(): Promise<{ sim: BotApiSim; admin: Person; dataDir: string }> {
  const sim = await start({ timeScale: TIME_SCALE });
  cleanup.push(() => sim.close());
  const dataDir = await mkdtemp(path.join(tmpdir(), "telepace-bot-broadcast-"));
  cleanup.push(() => rm(dataDir, { recursive: true, force: true }));
  const user = sim.users.create({ firstName: "Admin" });
  return { sim, admin: { user, chat: sim.chats.createPrivate(user) }, dataDir };
}

async function launch(
  sim: BotApiSim,
  options: { admins: number[]; dataDir: string; broadcastRate?: number },
): Promise<ReferenceBot> {
  const bot = await ReferenceBot.launch({
    token: sim.token,
    apiRoot: sim.apiRoot,
    logger: createLogger("error", [sim.token], new MemoryLog()),
    pollTimeoutS: 1,
    outbox: SCALED_OUTBOX,
    ...options,
  });
  cleanup.push(() => bot.stop({ timeoutMs: 2_000 }));
  return bot;
}

/** People who write to the bot first (so it knows them), each in their private chat. */
async function crowd(sim: BotApiSim, count: number): Promise<Person[]> {
  const people = Array.from({ length: count }, (_, index) => {
    const user = sim.users.create({ firstName: `Person ${index}` });
    return { user, chat: sim.chats.createPrivate(user) };
  });
  for (const { user, chat } of people) {
    const said = sim.sendText(user, chat, "hi");
    await replyTo(sim, chat, said, (m) => textOf(m) === "You said: hi");
  }
  return people;
}

const copiesOf = (sim: BotApiSim, chat: Chat, text: string) =>
  sim.transcript(chat).messages.filter((m) => textOf(m) === text).length;

describe("/broadcast", { timeout: E2E_TIMEOUT_MS * 2 }, () => {
  it("is refused to anyone who is not an admin", async () => {
    const { sim, admin, dataDir } = await world();
    await launch(sim, { admins: [admin.user.id], dataDir });
    const [mallory] = (await crowd(sim, 1)) as [Person];
    const sent = sim.sendCommand(mallory.user, mallory.chat, "broadcast", "buy now");
    const reply = await replyTo(sim, mallory.chat, sent, () => true);
    expect(textOf(reply)).toBe("Only the bot's admins can /broadcast.");
  });

  it("reaches everyone who wrote to the bot once, and ends its progress message in the outcomes", async () => {
    const { sim, admin, dataDir } = await world();
    await launch(sim, { admins: [admin.user.id], dataDir });
    const people = await crowd(sim, 4);
    sim.users.block((people[3] as Person).user);
    const command = sim.sendCommand(admin.user, admin.chat, "broadcast", "We are live");
    const progress = await replyTo(sim, admin.chat, command, (m) =>
      textOf(m).startsWith("Broadcast: 0/5"),
    );
    const final = await replyTo(sim, admin.chat, progress, (m) => FINAL.test(textOf(m)));
    expect(textOf(final)).toBe("Broadcast done: 5 people — 4 sent, 1 blocked the bot.");
    for (const person of [admin, ...people.slice(0, 3)]) {
      expect(copiesOf(sim, person.chat, "We are live")).toBe(1);
    }
    // The final message replaced the progress message.
    await eventually("the progress message deleted", () =>
      sim.transcript(admin.chat).messages.every((m) => m.message_id !== progress.message_id),
    );
  });

  it("goes on after the bot was stopped mid-way and started again on its data directory", async () => {
    const { sim, admin, dataDir } = await world();
    const options = { admins: [admin.user.id], dataDir, broadcastRate: 1 };
    const first = await launch(sim, options);
    const people = await crowd(sim, 5);
    const command = sim.sendCommand(admin.user, admin.chat, "broadcast", "Across a restart");
    await replyTo(sim, admin.chat, command, (m) => textOf(m).startsWith("Broadcast: 0/6"));
    const reached = () =>
      [admin, ...people].filter((person) => copiesOf(sim, person.chat, "Across a restart") > 0);
    await eventually("two reached", () => reached().length >= 2);
    await first.stop({ timeoutMs: 5_000 });
    expect(reached().length).toBeLessThan(6);
    await launch(sim, options);
    const final = await sim.waitForMessage(admin.chat, (m) => FINAL.test(textOf(m)), {
      timeoutMs: REPLY_TIMEOUT_MS,
    });
    expect(textOf(final)).toBe("Broadcast done: 6 people — 6 sent.");
    for (const person of [admin, ...people]) {
      expect(copiesOf(sim, person.chat, "Across a restart")).toBe(1);
    }
  });
});
