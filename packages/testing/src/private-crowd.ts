// A crowd for end-to-end tests against the Bot API simulator: users, each in a private chat with
// the bot, who send numbered messages in turn, and the order in which their messages came out.

/** The part of the simulator a crowd uses (structural, so this package needs no dependency on it). */
export interface CrowdSim<U, C> {
  readonly users: { create(): U };
  readonly chats: { createPrivate(user: NoInfer<U>): C };
  sendText(user: NoInfer<U>, chat: NoInfer<C>, text: string): unknown;
}

/** The shape of an update a crowd reads: a text message in a chat. */
export interface CrowdUpdate {
  readonly message?: { readonly chat: { readonly id: number }; readonly text?: string };
}

/** Users in private chats with the bot; see {@link privateCrowd}. */
export interface PrivateCrowd<C> {
  readonly chats: readonly C[];
  /** Sends `count` messages `"<label> <n>"`, n = 0, 1, …, from the users in turn. */
  send(count: number, label: string): void;
  /** Per chat, the `n` of each message among `updates`, in the order given. */
  sequences(updates: readonly CrowdUpdate[]): number[][];
}

/**
 * `size` users of `sim`, each in a private chat with its first bot.
 *
 * @example
 * const crowd = privateCrowd(sim, 10);
 * crowd.send(250, "after");
 * for (const seq of crowd.sequences(processed)) expect(seq).toEqual([...seq].sort((a, b) => a - b));
 */
export function privateCrowd<U, C extends { readonly id: number }>(
  sim: CrowdSim<U, C>,
  size: number,
): PrivateCrowd<C> {
  const users = Array.from({ length: size }, () => sim.users.create());
  const chats = users.map((user) => sim.chats.createPrivate(user));
  return {
    chats,
    send(count, label) {
      for (let n = 0; n < count; n++) {
        sim.sendText(users[n % size] as U, chats[n % size] as C, `${label} ${n}`);
      }
    },
    sequences(updates) {
      return chats.map((chat) =>
        updates
          .filter((update) => update.message?.chat.id === chat.id)
          .map((update) => Number(update.message?.text?.split(" ").at(-1))),
      );
    },
  };
}
