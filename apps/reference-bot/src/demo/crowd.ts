// A crowd of simulated users for the embedded demo: each user chats with the bot (echo, /work with
// and without Cancel, documents, /file, group mentions and jobs) and checks every reply it expects;
// scripted scenes add a group that migrates to a supergroup mid-job, a user who blocks the bot, and a
// crash: the bot is killed with SIGKILL mid-job and started again on its journal.

import { createHash, randomBytes } from "node:crypto";
import type { Chat, InlineKeyboardMarkup, Message, User } from "@grammyjs/types";
import type { BotApiSim } from "@telepace/bot-api-sim";
import { type Clock, systemClock } from "@telepace/core";
import { ANSWER_END, ANSWER_HEADER } from "../ask-answers.js";
import type { CrowdConfig } from "../config.js";
import { awaitStopChance, showsAnswer } from "./answer-watch.js";
import type { BroadcastScene } from "./broadcast-scene.js";
import type { Expectation, ExpectationKind } from "./expectation.js";

/** How the crowd sees the bot, for the checks only the bot can answer. */
export interface BotView {
  /** Whether the bot still considers the chat reachable (false once it noticed a block). */
  isReachable(chatId: number): boolean;
  /** Kills the bot with SIGKILL and starts it again on the same journal (the crash scene). */
  restart?(): Promise<void>;
}

interface Member {
  readonly user: User;
  readonly chat: Chat;
  readonly groups: GroupSlot[];
  /**
   * This user's own choices: one stream per user, so what each does does not depend on the order
   * in which the users' turns happen to interleave.
   */
  readonly random: () => number;
}

interface GroupSlot {
  chat: Chat;
  migrating: boolean;
  /** When the crowd last asked the bot something in this group (clock ms). */
  lastAskedAt: number;
}

/**
 * Least time between two of the crowd's requests to the bot in one group. A request costs the
 * group about 1.7 of Telegram's 20 messages a minute on average (a job: its progress message and
 * final), so one every 6 s keeps a group within its limit; a crowd asking more would only measure
 * Telegram's minute, not the bot.
 */
const GROUP_REQUEST_SPACING_MS = 6_000;

/** A tiny seeded PRNG (mulberry32), so a crowd run can be replayed with --seed. */
function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const REPLY_TIMEOUT_MS = 60_000;
const FIRST_NAMES = ["Ada", "Boris", "Chen", "Dana", "Emil", "Fatima", "Gus", "Hana", "Ivo", "Jun"];

function textOf(message: Message): string {
  return (
    ("text" in message ? message.text : undefined) ??
    ("caption" in message ? message.caption : undefined) ??
    ""
  );
}

/** Plays simulated users against a bot served by the sim. */
export class Crowd {
  readonly expectations: Expectation[] = [];
  /** Bot API calls the crowd made itself (with the bot's token, to check the files it sent). */
  readonly apiCalls: Record<string, number> = {};
  readonly #sim: BotApiSim;
  readonly #config: CrowdConfig;
  readonly #bot: BotView;
  readonly #clock: Clock;
  readonly #members: Member[] = [];
  readonly #groups: GroupSlot[] = [];
  readonly #formerGroups: number[] = [];
  #blocker: Member | undefined;
  #crasher: Member | undefined;
  readonly #broadcast: BroadcastScene | undefined;

  constructor(
    sim: BotApiSim,
    config: CrowdConfig,
    bot: BotView,
    clock: Clock = systemClock,
    broadcast?: BroadcastScene,
  ) {
    this.#sim = sim;
    this.#config = config;
    this.#bot = bot;
    this.#clock = clock;
    this.#broadcast = broadcast;
  }

  /** Every chat the crowd used: private chats, groups and the supergroups they became. */
  chatIds(): number[] {
    const ids = new Set<number>();
    for (const member of this.#members) ids.add(member.chat.id);
    for (const slot of this.#groups) ids.add(slot.chat.id);
    for (const id of this.#formerGroups) ids.add(id);
    return [...ids];
  }

  /** Creates the users, their private chats and the groups. */
  setup(): void {
    const sim = this.#sim;
    for (let i = 0; i < this.#config.users; i++) {
      const name = `${FIRST_NAMES[i % FIRST_NAMES.length]}${i >= FIRST_NAMES.length ? i : ""}`;
      const user = sim.users.create({ firstName: name });
      this.#members.push({
        user,
        chat: sim.chats.createPrivate(user),
        groups: [],
        random: seededRandom((this.#config.seed ^ Math.imul(i + 1, 0x9e3779b9)) >>> 0),
      });
    }
    for (let g = 0; g < this.#config.groups; g++) {
      const members = this.#members.filter(
        (_, i) => i % Math.max(1, this.#config.groups) === g || i === g,
      );
      const chosen = members.length > 0 ? members : [this.#members[0] as Member];
      const slot: GroupSlot = {
        chat: sim.chats.createGroup({ title: `Team ${g + 1}`, members: chosen.map((m) => m.user) }),
        migrating: false,
        lastAskedAt: Number.NEGATIVE_INFINITY,
      };
      this.#groups.push(slot);
      for (const member of chosen) member.groups.push(slot);
    }
    if (this.#members.length >= 3) this.#blocker = this.#members[this.#members.length - 1];
    if (this.#members.length >= 4 && this.#bot.restart !== undefined)
      this.#crasher = this.#members[this.#members.length - 2];
  }

  /** Runs the crowd for the configured duration, then waits for every expected reply. */
  async run(onProgress?: () => void): Promise<void> {
    const endAt = this.#clock.now() + this.#config.durationS * 1000;
    const players = this.#members.filter(
      (member) => member !== this.#blocker && member !== this.#crasher,
    );
    const scenes: Promise<void>[] = players.map((member, index) =>
      this.#play(member, endAt, index),
    );
    const migrating = this.#groups[0];
    if (migrating !== undefined) scenes.push(this.#migrationScene(migrating, endAt));
    if (this.#blocker !== undefined) scenes.push(this.#blockScene(this.#blocker, endAt));
    if (this.#crasher !== undefined) scenes.push(this.#crashScene(this.#crasher, endAt));
    if (this.#broadcast !== undefined) {
      const admin = { user: this.#broadcast.admin } as Member;
      const expectation = this.#expect("broadcast", admin);
      const chats = this.#members.map((member) => member.chat);
      scenes.push(this.#broadcast.run(chats, endAt, expectation));
    }
    let ticking = true;
    const ticker = (async () => {
      while (ticking && onProgress) {
        onProgress();
        await this.#clock.sleep(250);
      }
    })();
    await Promise.all(scenes);
    ticking = false;
    await ticker;
  }

  async #play(member: Member, endAt: number, index: number): Promise<void> {
    // Stagger the start so the crowd does not arrive in one instant.
    await this.#clock.sleep(index * 150);
    if (member.groups.length === 0 || member.random() < 0.5) await this.#help(member);
    while (this.#clock.now() < endAt) {
      const roll = member.random();
      const now = this.#clock.now();
      const group = member.groups.find(
        (slot) => !slot.migrating && now - slot.lastAskedAt >= GROUP_REQUEST_SPACING_MS,
      );
      if (member.random() < 0.12) await this.#ask(member, roll < 0.35);
      else if (roll < 0.3)
        await this.#echo(member, member.chat, "echo", `note ${this.#nonce(member)}`);
      else if (roll < 0.45) await this.#work(member, false);
      else if (roll < 0.55) await this.#work(member, true);
      else if (roll < 0.67) await this.#document(member);
      else if (roll < 0.77) await this.#file(member);
      else if (group !== undefined && roll < 0.9) {
        group.lastAskedAt = now;
        const text = `@${this.#sim.bot.username} ping ${this.#nonce(member)}`;
        await this.#echo(member, group.chat, "group-echo", text);
      } else if (group !== undefined) {
        group.lastAskedAt = now;
        await this.#groupWork(member, group);
      } else await this.#echo(member, member.chat, "echo", `note ${this.#nonce(member)}`);
      await this.#clock.sleep(300 + member.random() * 1200);
    }
  }

  #nonce(member: Member): number {
    return Math.floor(member.random() * 1e6);
  }

  #expect(kind: ExpectationKind, member: Member): Expectation {
    const expectation: Expectation = {
      kind,
      user: member.user.first_name,
      met: false,
      problem: "",
      latencyMs: undefined,
    };
    this.expectations.push(expectation);
    return expectation;
  }

  async #await(
    expectation: Expectation,
    chat: Chat,
    after: Message,
    predicate: (message: Message) => boolean,
    what: string,
  ): Promise<Message | undefined> {
    const startedAt = this.#clock.now();
    try {
      const reply = await this.#sim.waitForMessage(chat, predicate, {
        afterMessageId: after.message_id,
        timeoutMs: REPLY_TIMEOUT_MS,
      });
      expectation.latencyMs = this.#clock.now() - startedAt;
      return reply;
    } catch {
      expectation.problem = `no ${what} within ${REPLY_TIMEOUT_MS / 1000} s`;
      return undefined;
    }
  }

  #pass(expectation: Expectation): void {
    expectation.met = true;
  }

  async #help(member: Member): Promise<void> {
    const expectation = this.#expect("help", member);
    const sent = this.#sim.sendCommand(member.user, member.chat, "start");
    const reply = await this.#await(
      expectation,
      member.chat,
      sent,
      (m) => textOf(m).includes("/work"),
      "help text",
    );
    if (reply) this.#pass(expectation);
  }

  async #echo(
    member: Member,
    chat: Chat,
    kind: "echo" | "group-echo",
    text: string,
  ): Promise<void> {
    const expectation = this.#expect(kind, member);
    const sent = this.#sim.sendText(member.user, chat, text);
    const reply = await this.#await(
      expectation,
      chat,
      sent,
      (m) => textOf(m) === `You said: ${text}`,
      "echo",
    );
    if (reply) this.#pass(expectation);
  }

  /**
   * Waits for the final message of `member`'s job: "Done, <name>: …", or the message a restarted
   * bot sends for a job the crash interrupted.
   */
  async #awaitDone(
    expectation: Expectation,
    member: Member,
    chat: Chat,
    after: Message,
  ): Promise<void> {
    const done = `Done, ${member.user.first_name}:`;
    const restarted = restartedEnding(member);
    const reply = await this.#await(
      expectation,
      chat,
      after,
      (m) => textOf(m).startsWith(done) || textOf(m).startsWith(restarted),
      "final message",
    );
    if (reply) this.#pass(expectation);
  }

  async #work(member: Member, cancel: boolean): Promise<void> {
    const expectation = this.#expect(cancel ? "cancel" : "work", member);
    const seconds = cancel ? 8 : 2 + Math.floor(member.random() * 3);
    const sent = this.#sim.sendCommand(member.user, member.chat, "work", String(seconds));
    if (!cancel) return this.#awaitDone(expectation, member, member.chat, sent);
    const progress = await this.#await(
      expectation,
      member.chat,
      sent,
      (m) => cancelData(m) !== undefined,
      "progress message",
    );
    const data = progress ? cancelData(progress) : undefined;
    if (progress === undefined || data === undefined) return;
    await this.#clock.sleep(800 + member.random() * 1200);
    let query: { id: string };
    try {
      query = this.#sim.pressButton(member.user, member.chat, progress.message_id, data);
    } catch {
      // The job finished first: the button is gone with its message. Expect the normal ending.
      return this.#awaitDone(expectation, member, member.chat, sent);
    }
    const [answer, reply] = await Promise.all([
      this.#sim
        .waitForCallbackAnswer(query.id, { timeoutMs: REPLY_TIMEOUT_MS })
        .catch(() => undefined),
      this.#await(
        expectation,
        member.chat,
        progress,
        (m) =>
          /^(Cancelled|Done), /.test(textOf(m)) || textOf(m).startsWith(restartedEnding(member)),
        "final message",
      ),
    ]);
    if (answer === undefined) expectation.problem = "the button press was never answered";
    else if (reply) this.#pass(expectation);
  }

  /** /ask: a streamed answer; with `stop`, the user presses Stop on its draft. */
  async #ask(member: Member, stop: boolean): Promise<void> {
    const expectation = this.#expect(stop ? "ask-stop" : "ask", member);
    const question = `why ${this.#nonce(member)}?`;
    // An answer's latency is until it starts to show (a draft, or its progress message): the
    // final comes after the whole generation, by design.
    const askedAt = this.#clock.now();
    const shows = this.#sim
      .waitForEvent(member.chat, showsAnswer, { timeoutMs: REPLY_TIMEOUT_MS })
      .then(
        () => this.#clock.now() - askedAt,
        () => undefined,
      );
    const sent = this.#sim.sendCommand(member.user, member.chat, "ask", question);
    if (stop) {
      // Under load the answer may arrive whole before a draft with text ever showed: then the
      // user had nothing to stop, and the whole answer is what they get.
      const chance = await awaitStopChance(this.#sim, member.chat, REPLY_TIMEOUT_MS);
      if (chance === "nothing") {
        expectation.problem = "neither a draft with a Stop button nor the answer";
        return;
      }
      if (chance === "draft") {
        try {
          this.#sim.stopDraft(member.user, member.chat);
        } catch {
          // The draft was gone by the press (the answer had just ended): its whole text is next.
        }
      }
    }
    // The answer may continue in several messages; the last one ends it (or is cut by Stop).
    const reply = await this.#await(
      expectation,
      member.chat,
      sent,
      (m) => (stop ? textOf(m).startsWith(ANSWER_HEADER) : textOf(m).endsWith(ANSWER_END)),
      stop ? "stopped answer" : "answer",
    );
    if (reply === undefined) return;
    expectation.latencyMs = (await shows) ?? expectation.latencyMs;
    this.#pass(expectation);
  }

  async #document(member: Member): Promise<void> {
    const expectation = this.#expect("document", member);
    const size = 4096 + Math.floor(member.random() * 1536 * 1024);
    const bytes = randomBytes(size);
    const sha = createHash("sha256").update(bytes).digest("hex");
    const sent = this.#sim.sendDocument(member.user, member.chat, {
      bytes,
      fileName: `notes-${size}.bin`,
    });
    const reply = await this.#await(
      expectation,
      member.chat,
      sent,
      (m) => textOf(m).includes("SHA-256"),
      "digest reply",
    );
    if (reply === undefined) return;
    if (textOf(reply).includes(`${size} bytes, SHA-256 ${sha}`)) this.#pass(expectation);
    else expectation.problem = `wrong digest: ${textOf(reply)}`;
  }

  async #file(member: Member): Promise<void> {
    const expectation = this.#expect("file", member);
    const kib = [16, 64, 256, 1024][Math.floor(member.random() * 4)] as number;
    const sent = this.#sim.sendCommand(member.user, member.chat, "file", String(kib));
    const reply = await this.#await(
      expectation,
      member.chat,
      sent,
      (m) => "document" in m,
      "document",
    );
    if (reply === undefined || !("document" in reply)) return;
    const claimed = /SHA-256 ([0-9a-f]{64})/.exec(textOf(reply))?.[1];
    const actual = await this.#downloadDigest(reply.document.file_id);
    if (reply.document.file_size !== kib * 1024)
      expectation.problem = `size ${reply.document.file_size}, expected ${kib * 1024}`;
    else if (claimed === undefined || claimed !== actual)
      expectation.problem = "the file's bytes do not match its caption";
    else this.#pass(expectation);
  }

  async #groupWork(member: Member, group: GroupSlot): Promise<void> {
    const expectation = this.#expect("group-work", member);
    const sent = this.#sim.sendCommand(member.user, group.chat, "work", "2");
    await this.#awaitDone(expectation, member, group.chat, sent);
  }

  /** A group becomes a supergroup while a job runs in it: the final message must reach the supergroup. */
  async #migrationScene(slot: GroupSlot, endAt: number): Promise<void> {
    await this.#clock.sleep(Math.max(0, (endAt - this.#clock.now()) * 0.3));
    const member = this.#members.find((m) => m.groups.includes(slot) && m !== this.#blocker);
    if (member === undefined) return;
    const expectation = this.#expect("migration", member);
    slot.migrating = true;
    const old = slot.chat;
    const sent = this.#sim.sendCommand(member.user, old, "work", "6");
    const progress = await this.#await(
      expectation,
      old,
      sent,
      (m) => cancelData(m) !== undefined,
      "progress message",
    );
    if (progress === undefined) return;
    await this.#clock.sleep(1500);
    const supergroup = this.#sim.chats.migrateToSupergroup(old, { by: member.user });
    this.#formerGroups.push(old.id);
    slot.chat = supergroup;
    slot.migrating = false;
    const migrateMessage = this.#sim.transcript(supergroup).messages[0] as Message;
    await this.#awaitDone(expectation, member, supergroup, migrateMessage);
  }

  /** A user starts a job and blocks the bot: the bot must notice and stop writing to them. */
  async #blockScene(member: Member, endAt: number): Promise<void> {
    await this.#clock.sleep(Math.max(0, (endAt - this.#clock.now()) * 0.5));
    const expectation = this.#expect("blocked", member);
    const sent = this.#sim.sendCommand(member.user, member.chat, "work", "5");
    const progress = await this.#await(
      expectation,
      member.chat,
      sent,
      (m) => cancelData(m) !== undefined,
      "progress message",
    );
    if (progress === undefined) return;
    this.#sim.users.block(member.user);
    const deadline = this.#clock.now() + 15_000;
    while (this.#bot.isReachable(member.chat.id) && this.#clock.now() < deadline)
      await this.#clock.sleep(100);
    if (this.#bot.isReachable(member.chat.id))
      expectation.problem = "the bot did not notice it was blocked";
    else this.#pass(expectation);
  }

  /**
   * The bot is killed with SIGKILL while this user's job runs, and started again on its journal:
   * the user must still get an ending for the job.
   */
  async #crashScene(member: Member, endAt: number): Promise<void> {
    const restart = this.#bot.restart;
    if (restart === undefined) return;
    await this.#clock.sleep(Math.max(0, (endAt - this.#clock.now()) * 0.6));
    const expectation = this.#expect("restart", member);
    const sent = this.#sim.sendCommand(member.user, member.chat, "work", "10");
    const progress = await this.#await(
      expectation,
      member.chat,
      sent,
      (m) => cancelData(m) !== undefined,
      "progress message",
    );
    if (progress === undefined) return;
    await this.#clock.sleep(1000);
    await restart.call(this.#bot);
    const ending = restartedEnding(member);
    const reply = await this.#await(
      expectation,
      member.chat,
      progress,
      (m) => textOf(m).startsWith(ending),
      "message about the interrupted job",
    );
    if (reply) this.#pass(expectation);
  }

  async #downloadDigest(fileId: string): Promise<string> {
    const base = `${this.#sim.apiRoot}`;
    const token = this.#sim.token;
    this.apiCalls.getFile = (this.apiCalls.getFile ?? 0) + 1;
    const info = (await (
      await fetch(`${base}/bot${token}/getFile?file_id=${encodeURIComponent(fileId)}`)
    ).json()) as {
      result?: { file_path?: string };
    };
    const path = info.result?.file_path;
    if (path === undefined) return "";
    const bytes = new Uint8Array(
      await (await fetch(`${base}/file/bot${token}/${path}`)).arrayBuffer(),
    );
    return createHash("sha256").update(bytes).digest("hex");
  }
}

/** How a restarted bot's message about a job the crash interrupted begins. */
function restartedEnding(member: Member): string {
  return `Interrupted, ${member.user.first_name}: the bot restarted`;
}

function cancelData(message: Message): string | undefined {
  const markup = (message as { reply_markup?: InlineKeyboardMarkup }).reply_markup;
  const button = markup?.inline_keyboard[0]?.[0];
  return button !== undefined && "callback_data" in button ? button.callback_data : undefined;
}
