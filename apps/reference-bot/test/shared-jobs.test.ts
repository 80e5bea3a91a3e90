// /work jobs of a bot run as several processes (`--redis`): a Cancel press handled by a process
// that does not run the job still cancels it (and the answer says so), and a job whose process is
// killed with SIGKILL is ended by a surviving process: its progress message is replaced by a
// message saying how far it came, as one process does after a restart.

import type { Update, UserFromGetMe } from "@grammyjs/types";
import type { BotApiSim } from "@telepace/bot-api-sim";
import { TelegramClient } from "@telepace/client";
import { botIdOf, RedisJobRegistry } from "@telepace/redis";
import { describeWithRedis } from "@telepace/testing";
import { expect, it } from "vitest";
import { type BotHandlers, createHandlers } from "../src/bot-handlers.js";
import { createLogger } from "../src/logger.js";
import { SharedJobStore } from "../src/shared-job-store.js";
import { cancelData, eventually, MemoryLog, REPLY_TIMEOUT_MS, replyTo, textOf } from "./harness.js";
import { RUNNING, sharedProcesses } from "./shared-processes.js";

const { onCleanup, sim, freshRedis, bot } = sharedProcesses();

describeWithRedis("/work jobs across processes", (server) => {
  /** The handlers of one process, their jobs in the shared registry. */
  function processOf(on: BotApiSim, me: UserFromGetMe, name: string, prefix: string): BotHandlers {
    const client = new TelegramClient({ token: on.token, apiRoot: on.apiRoot });
    const registry = new RedisJobRegistry({
      redis: server().url,
      botId: botIdOf(on.token),
      prefix,
      ownerId: name,
    });
    const stop = new AbortController();
    const logger = createLogger("silent", [on.token], new MemoryLog());
    const handlers = createHandlers(
      me,
      client,
      { logger, jobStore: new SharedJobStore(registry, logger, stop.signal) },
      new URL(on.apiRoot).host,
    );
    onCleanup(async () => {
      await handlers.jobs.interruptAll();
      stop.abort();
      await registry.close();
      await client.close({ drain: true, timeoutMs: 2_000 });
    });
    return handlers;
  }

  it("a Cancel press handled by another process cancels the job there, and says so", async () => {
    const on = await sim();
    const poller = new TelegramClient({ token: on.token, apiRoot: on.apiRoot });
    onCleanup(() => poller.close());
    const me = await poller.getMe();
    const prefix = `jobs-test-${process.pid}`;
    const [first, second] = [
      processOf(on, me, "p1", prefix),
      processOf(on, me, "p2", prefix),
    ] as const;
    await Promise.all([first.jobs.recover(), second.jobs.recover()]);
    let offset = 0;
    /** The next message or button press (the group's service updates are passed over). */
    const nextUpdate = async (): Promise<Update> => {
      for (;;) {
        const [update] = await poller.getUpdates({ offset, timeout: 5, limit: 1 });
        if (update === undefined) continue;
        offset = update.update_id + 1;
        if (update.callback_query !== undefined || update.message?.text !== undefined) {
          return update;
        }
      }
    };
    const alice = on.users.create({ firstName: "Alice" });
    const bob = on.users.create({ firstName: "Bob" });
    const group = on.chats.createGroup({ members: [alice, bob] });
    const sent = on.sendCommand(alice, group, "work", "30");
    await first.router.handle(await nextUpdate(), new AbortController().signal);
    const progress = await replyTo(on, group, sent, (m) => cancelData(m) !== undefined);
    const data = cancelData(progress) as string;
    expect(first.jobs.running).toBe(1);

    // Bob's press reaches the second process: refused, as the job's own process refuses it.
    const bobsPress = on.pressButton(bob, group, progress.message_id, data);
    await second.router.handle(await nextUpdate(), new AbortController().signal);
    expect((await on.waitForCallbackAnswer(bobsPress.id, { timeoutMs: 5_000 })).text).toBe(
      "Only the person who started this job can cancel it.",
    );
    const alicesPress = on.pressButton(alice, group, progress.message_id, data);
    await second.router.handle(await nextUpdate(), new AbortController().signal);
    expect((await on.waitForCallbackAnswer(alicesPress.id, { timeoutMs: 5_000 })).text).toBe(
      "Cancelling…",
    );
    const final = await replyTo(on, group, progress, (m) => /^(Cancelled|Done)/.test(textOf(m)));
    expect(textOf(final)).toMatch(/^Cancelled, Alice, at \d+%\.$/);
    await eventually("the job ended", () => first.jobs.running === 0);
    expect(first.jobs.counters.ended).toMatchObject({ cancelled: 1, done: 0 });

    // Once it ended, a press anywhere says so (its progress message is gone: asked directly).
    expect(await second.jobs.cancel(data.slice("cancel:".length), alice.id)).toBe(
      "That job has already finished.",
    );
  }, 30_000);

  it("two processes: every Cancel press is honoured, whichever process takes it", async () => {
    const on = await sim();
    const redisUrl = await freshRedis();
    const processes = [bot(on, redisUrl), bot(on, redisUrl)];
    for (const each of processes) await each.line(RUNNING);
    const people = Array.from({ length: 6 }, (_, i) => on.users.create({ firstName: `P${i}` }));
    const chats = people.map((person) => on.chats.createPrivate(person));
    const progress = await Promise.all(
      people.map(async (person, i) => {
        const chat = chats[i] as (typeof chats)[number];
        const sent = on.sendCommand(person, chat, "work", "30");
        return replyTo(on, chat, sent, (m) => cancelData(m) !== undefined);
      }),
    );
    const answers = await Promise.all(
      people.map(async (person, i) => {
        const message = progress[i] as (typeof progress)[number];
        const press = on.pressButton(
          person,
          chats[i] as never,
          message.message_id,
          cancelData(message) as string,
        );
        return (await on.waitForCallbackAnswer(press.id, { timeoutMs: REPLY_TIMEOUT_MS })).text;
      }),
    );
    expect(answers).toEqual(people.map(() => "Cancelling…"));
    const finals = await Promise.all(
      people.map(async (person, i) => {
        const final = await replyTo(on, chats[i] as never, progress[i] as never, (m) =>
          /^(Cancelled|Done|Interrupted)/.test(textOf(m)),
        );
        return textOf(final).replace(/\d+%/, "N%").replace(person.first_name, "<name>");
      }),
    );
    expect(finals).toEqual(people.map(() => "Cancelled, <name>, at N%."));
  }, 60_000);

  it("a job's process killed with SIGKILL: a surviving process ends it for its user, saying how far it came", async () => {
    const on = await sim();
    const redisUrl = await freshRedis();
    const doomed = bot(on, redisUrl);
    await doomed.line(RUNNING);
    const alice = on.users.create({ firstName: "Alice" });
    const chat = on.chats.createPrivate(alice);
    const sent = on.sendCommand(alice, chat, "work", "30");
    const progress = await replyTo(on, chat, sent, (m) => cancelData(m) !== undefined);
    const survivor = bot(on, redisUrl);
    await survivor.line(RUNNING);
    // Some progress first, so there is a figure to report.
    await on.waitForEvent(chat, (event) => event.kind === "edit", { timeoutMs: REPLY_TIMEOUT_MS });
    doomed.child.kill("SIGKILL");
    await doomed.exited;
    const killedAt = performance.now();
    const ending = await replyTo(on, chat, progress, (m) => /^Interrupted/.test(textOf(m)));
    const percent = Number(
      /^Interrupted, Alice: the bot process running your 30 s job stopped at (\d+)%\. Send \/work 30 to run it again\.$/.exec(
        textOf(ending),
      )?.[1],
    );
    expect(percent).toBeGreaterThan(0);
    expect(percent).toBeLessThan(100);
    // The lease (1.5 s) and the survivor's next renewal, not a restart.
    expect(performance.now() - killedAt).toBeLessThan(5_000);
    // Replaced: the progress message is deleted once the ending is out.
    await on.waitForEvent(
      chat,
      (event) => event.kind === "delete" && event.messageId === progress.message_id,
      { timeoutMs: REPLY_TIMEOUT_MS },
    );
    // The survivor serves the person as before.
    const hello = on.sendText(alice, chat, "still there?");
    expect(textOf(await replyTo(on, chat, hello, () => true))).toBe("You said: still there?");
  }, 60_000);
});
