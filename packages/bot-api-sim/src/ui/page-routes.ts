// The control routes the chat page reads: the chat list, one chat as the page shows it, the users
// to start chats with, the panel of limits and faults, and the mirrors of sendBudget,
// replyKeyboard and faults.armed(). Every list is bounded by a `limit` the caller may lower.

import type { BotApiSim } from "../control/bot-api-sim.js";
import type { ControlInput } from "../control/control-input.js";
import type { Route } from "../control/control-routes.js";
import type { ChatRecord } from "../world/chat-record.js";
import type { SimWorld } from "../world/sim-world.js";
import { activitySeq, pageChat, shownDraft } from "./page-json.js";

/** Most entries one list answer holds. */
const MAX_LIST = 1000;

function limitOf(input: ControlInput, fallback: number): number {
  const limit = input.int("limit") ?? fallback;
  if (limit < 1 || limit > MAX_LIST) {
    throw new RangeError(`Expected \`limit\` to be an integer from 1 to ${MAX_LIST}, got ${limit}`);
  }
  return limit;
}

/** The bot a page request concerns: the one asked for, the private chat's, or the chat's first. */
function botOf(world: SimWorld, record: ChatRecord, input: ControlInput) {
  const first = [...record.bots.keys()][0];
  return world.resolveBot(input.bot() ?? record.botId ?? first);
}

function chatList(world: SimWorld, input: ControlInput): unknown {
  const limit = limitOf(input, 200);
  const records = [...world.chats()];
  const order = records.map((record) => ({ record, seq: activitySeq(record) }));
  order.sort((a, b) => b.seq - a.seq);
  return {
    chats: order.slice(0, limit).map(({ record }) => pageChat(record)),
    total: records.length,
  };
}

/** The bots of a chat with what the page shows of them (their command menu among it). */
function botsOf(world: SimWorld, record: ChatRecord): unknown[] {
  const entries: [number, string][] =
    record.botId === undefined
      ? [...record.bots]
      : [[record.botId, record.blocked ? "kicked" : "member"]];
  return entries.map(([id, status]) => {
    const bot = world.botById(id);
    return {
      id,
      username: bot?.user.username,
      firstName: bot?.user.first_name,
      status,
      commands: bot?.commands ?? [],
    };
  });
}

function chatView(world: SimWorld, input: ControlInput): unknown {
  const record = world.resolveChat(input.chat(), input.bot());
  const limit = limitOf(input, 200);
  const messages = [...record.messages.values()].map((stored) => stored.message);
  return {
    chat: pageChat(record),
    messages: messages.slice(-limit),
    earlierMessages: Math.max(0, messages.length - limit) + record.forgottenMessages,
    draft: shownDraft(world, record),
    members: [...record.members].map(([id, status]) => ({ user: world.userById(id), status })),
    bots: botsOf(world, record),
    nowMs: world.now(),
  };
}

function userList(world: SimWorld, input: ControlInput): unknown {
  const limit = limitOf(input, 500);
  const users = [...world.users()];
  return { users: users.slice(-limit).reverse(), total: users.length };
}

function panel(sim: BotApiSim, world: SimWorld, input: ControlInput): unknown {
  const record = world.resolveChat(input.chat(), input.bot());
  const bot = botOf(world, record, input);
  const counters = world.counters.snapshot();
  return {
    bot: {
      id: bot.id,
      username: bot.user.username,
      pendingUpdates: bot.queue.pending(world.now()),
      isPolling: bot.longPoll.isParked,
      webhookUrl: bot.webhook?.url ?? "",
    },
    budget: bot.limiter.budget(record.key, record.isGroup, world.now()),
    rateLimits: bot.limiter.limits,
    timeScale: world.options.timeScale,
    tooManyRequests: {
      chat: counters.tooManyRequestsByChat[String(record.id)] ?? 0,
      total: counters.tooManyRequests,
    },
    faultsInjected: counters.faultsInjected,
    faults: sim.faults.armed(),
  };
}

/** The page's routes by `METHOD /path`, to serve beside the control routes. */
export function createPageRoutes(world: SimWorld): ReadonlyMap<string, Route> {
  const chatFields = ["chat_id", "bot_id", "limit"];
  return new Map<string, Route>([
    ["GET /page/chats", { fields: ["limit"], run: (_sim, input) => chatList(world, input) }],
    ["GET /page/chat", { fields: chatFields, run: (_sim, input) => chatView(world, input) }],
    ["GET /page/users", { fields: ["limit"], run: (_sim, input) => userList(world, input) }],
    [
      "GET /page/panel",
      { fields: ["chat_id", "bot_id"], run: (sim, input) => panel(sim, world, input) },
    ],
    [
      "GET /budget",
      {
        fields: ["chat_id", "bot_id"],
        run: (sim, input) => sim.sendBudget(input.chat(), input.optional({ bot: input.bot() })),
      },
    ],
    [
      "GET /keyboard",
      {
        fields: ["user_id", "chat_id", "bot_id"],
        run: (sim, input) =>
          sim.replyKeyboard(
            input.requiredInt("user_id"),
            input.chat(),
            input.optional({ bot: input.bot() }),
          ) ?? null,
      },
    ],
    ["GET /faults", { fields: [], run: (sim) => sim.faults.armed() }],
  ]);
}
