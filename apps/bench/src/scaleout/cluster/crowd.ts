// The load of a scale-out run: people, each in a private chat with the bot, sending numbered
// texts through the sim; what each chat expects back, and how much of it came.

import type { BotApiSim } from "@telepace/bot-api-sim";

export interface Crowd {
  readonly chats: readonly { readonly id: number }[];
  /** Each chat's texts in the order they were sent. */
  readonly expected: ReadonlyMap<number, readonly string[]>;
  /** Every person sends `count` more texts, numbered from `from`. */
  send(count: number, from: number): void;
  /** Texts sent so far. */
  total(): number;
  /** Distinct texts the bot echoed so far. */
  echoed(): number;
  /** When the sim received the first echo (its clock, ms), or undefined before it. */
  firstEchoAtMs(): number | undefined;
}

export function crowd(sim: BotApiSim, size: number): Crowd {
  const people = Array.from({ length: size }, (_, i) => sim.users.create({ firstName: `p${i}` }));
  const chats = people.map((person) => sim.chats.createPrivate(person));
  const expected = new Map<number, string[]>();
  return {
    chats,
    expected,
    send(count, from) {
      for (let n = from; n < from + count; n++) {
        people.forEach((person, i) => {
          const chat = chats[i] as (typeof chats)[number];
          const text = `${i}:${n}`;
          sim.sendText(person, chat, text);
          expected.set(chat.id, [...(expected.get(chat.id) ?? []), text]);
        });
      }
    },
    total: () => [...expected.values()].reduce((sum, texts) => sum + texts.length, 0),
    echoed: () => chats.reduce((sum, chat) => sum + new Set(echoes(sim, chat.id)).size, 0),
    firstEchoAtMs: () => {
      const firsts = chats.flatMap((chat) => echoEvents(sim, chat.id).slice(0, 1));
      return firsts.length === 0 ? undefined : Math.min(...firsts.map((e) => e.atMs));
    },
  };
}

/** The bot's echo sends in a chat, in the order the sim received them. */
export function echoEvents(sim: BotApiSim, chatId: number) {
  return sim
    .transcript(chatId)
    .events.filter((e) => e.actor === "bot" && e.kind === "send" && e.text?.startsWith("echo "));
}

/** The texts the bot echoed in a chat, in the order the sim received them. */
function echoes(sim: BotApiSim, chatId: number): string[] {
  return echoEvents(sim, chatId).map((e) => (e.text as string).slice(5));
}
