// The demo's broadcast, across its crash: an admin (a user the bot is started with as --admin)
// says hello early, then sends /broadcast shortly before the crash scene kills the bot; the bot,
// slowed to a few messages a second, is killed mid-broadcast and resumes it from its journal. The
// scene passes when the admin gets the final message and the chats agree with it: everyone it
// counts as sent has the message, and no one has it twice beyond what it reports as sent again.

import type { Chat, Message, User } from "@grammyjs/types";
import type { BotApiSim } from "@telepace/bot-api-sim";
import { type Clock, systemClock } from "@telepace/core";
import type { Expectation } from "./expectation.js";

/** Broadcast messages a second in the demo: slow enough that the broadcast spans the crash. */
export const DEMO_BROADCAST_RATE = 2;

const FINAL = /^Broadcast (done|cancelled|failed): (\d+) people — (.*)\.$/;

function textOf(message: Message): string {
  return "text" in message && message.text !== undefined ? message.text : "";
}

/** The admin and their chat, made before the bot starts (the bot needs the admin's id). */
export class BroadcastScene {
  readonly admin: User;
  readonly #chat: Chat;
  readonly #sim: BotApiSim;
  readonly #clock: Clock;
  readonly #text: string;

  constructor(sim: BotApiSim, seed: number, clock: Clock = systemClock) {
    this.#sim = sim;
    this.#clock = clock;
    this.admin = sim.users.create({ firstName: "Admin" });
    this.#chat = sim.chats.createPrivate(this.admin);
    this.#text = `Demo news #${seed}: telepace broadcasts resume after a crash`;
  }

  /**
   * Plays the scene against `recipients` (the crowd's private chats): hello at once, /broadcast at
   * 60% of the run less half a second (the crash scene kills the bot a second or two after 60%).
   */
  async run(recipients: readonly Chat[], endAt: number, expectation: Expectation): Promise<void> {
    const sim = this.#sim;
    sim.sendText(this.admin, this.#chat, "hello");
    await this.#clock.sleep(Math.max(0, (endAt - this.#clock.now()) * 0.6 - 500));
    const startedAt = this.#clock.now();
    const command = sim.sendCommand(this.admin, this.#chat, "broadcast", this.#text);
    let final: Message;
    try {
      final = await sim.waitForMessage(this.#chat, (m) => FINAL.test(textOf(m)), {
        afterMessageId: command.message_id,
        timeoutMs: 90_000,
      });
    } catch {
      expectation.problem = "no final broadcast message within 90 s";
      return;
    }
    expectation.latencyMs = this.#clock.now() - startedAt;
    const [, , , outcomes = ""] = FINAL.exec(textOf(final)) ?? [];
    const count = (what: string) => Number(new RegExp(`(\\d+) ${what}`).exec(outcomes)?.[1] ?? 0);
    const sent = count("sent");
    const sentAgain = count("sent again after a crash");
    const copies = [this.#chat, ...recipients].map(
      (chat) => sim.transcript(chat).messages.filter((m) => textOf(m) === this.#text).length,
    );
    const reached = copies.filter((n) => n > 0).length;
    const extra = copies.reduce((sum, n) => sum + Math.max(0, n - 1), 0);
    if (reached !== sent) {
      expectation.problem = `the bot counts ${sent} sent, ${reached} chats have the message`;
    } else if (extra > sentAgain) {
      expectation.problem = `${extra} extra copies, ${sentAgain} reported sent again`;
    } else {
      expectation.met = true;
    }
  }
}
