// The routes of the HTTP control API: each maps snake_case fields onto one call of the
// in-process control API and returns what it returns.

import { IMPLEMENTED_METHODS } from "../methods/method-table.js";
import type { FaultInjector } from "../wire/faults.js";
import type { BotApiSim } from "./bot-api-sim.js";
import type { ControlInput } from "./control-input.js";

type Route = (sim: BotApiSim, input: ControlInput) => unknown;

function addFault(faults: FaultInjector, input: ControlInput): unknown {
  const method = input.requiredString("method");
  const kind = input.string("kind") ?? "fail";
  const count = input.int("count") ?? 1;
  const afterProcessing = input.bool("after_processing") ?? false;
  if (kind === "fail") {
    faults.failNext(
      method,
      count,
      input.optional({
        code: input.int("code"),
        description: input.string("description"),
        retryAfter: input.number("retry_after"),
        afterProcessing,
      }),
    );
  } else if (kind === "reset") {
    faults.resetNext(method, count, { afterProcessing });
  } else if (kind === "malformed") {
    faults.malformNext(method, count, { afterProcessing });
  } else {
    throw new RangeError(
      `Expected \`kind\` to be "fail", "reset" or "malformed", got ${JSON.stringify(kind)}`,
    );
  }
  return faults.pending();
}

/** Control routes by `METHOD /path` (relative to the control prefix). */
export const CONTROL_ROUTES: ReadonlyMap<string, Route> = new Map<string, Route>([
  [
    "GET /",
    (sim) => ({
      api_root: sim.apiRoot,
      bots: sim.bots.map((bot) => bot.user),
      implemented_methods: IMPLEMENTED_METHODS,
    }),
  ],
  ["GET /state", (sim) => sim.snapshot()],
  ["GET /counters", (sim) => sim.counters()],
  [
    "POST /users",
    (sim, input) =>
      sim.users.create(
        input.optional({
          firstName: input.string("first_name"),
          lastName: input.string("last_name"),
          username: input.string("username"),
          languageCode: input.string("language_code"),
          isPremium: input.bool("is_premium"),
        }),
      ),
  ],
  [
    "POST /users/block",
    (sim, input) => {
      sim.users.block(input.requiredInt("user_id"), input.optional({ bot: input.bot() }));
      return true;
    },
  ],
  [
    "POST /users/unblock",
    (sim, input) => {
      sim.users.unblock(input.requiredInt("user_id"), input.optional({ bot: input.bot() }));
      return true;
    },
  ],
  [
    "POST /chats/private",
    (sim, input) =>
      sim.chats.createPrivate(
        input.requiredInt("user_id"),
        input.optional({ bot: input.bot(), started: input.bool("started") }),
      ),
  ],
  ...(["group", "supergroup"] as const).map((kind): [string, Route] => [
    `POST /chats/${kind}`,
    (sim, input) => {
      const options = {
        members: input.intArray("member_ids") ?? [],
        ...input.optional({
          title: input.string("title"),
          creator: input.int("creator_id"),
          bots: input.intArray("bot_ids"),
          botsAreAdmins: input.bool("bots_are_admins"),
        }),
      };
      return kind === "group"
        ? sim.chats.createGroup(options)
        : sim.chats.createSupergroup(options);
    },
  ]),
  [
    "POST /chats/migrate",
    (sim, input) =>
      sim.chats.migrateToSupergroup(input.chat(), input.optional({ by: input.int("by_id") })),
  ],
  [
    "POST /chats/members/add",
    (sim, input) => {
      sim.chats.addMember(
        input.chat(),
        input.requiredInt("user_id"),
        input.optional({ by: input.int("by_id") }),
      );
      return true;
    },
  ],
  [
    "POST /chats/members/remove",
    (sim, input) => {
      sim.chats.removeMember(
        input.chat(),
        input.requiredInt("user_id"),
        input.optional({ by: input.int("by_id"), ban: input.bool("ban") }),
      );
      return true;
    },
  ],
  [
    "POST /chats/bots/add",
    (sim, input) => {
      sim.chats.addBot(
        input.chat(),
        input.optional({
          bot: input.bot(),
          by: input.int("by_id"),
          asAdmin: input.bool("as_admin"),
        }),
      );
      return true;
    },
  ],
  [
    "POST /chats/bots/remove",
    (sim, input) => {
      sim.chats.removeBot(
        input.chat(),
        input.optional({ bot: input.bot(), by: input.int("by_id"), ban: input.bool("ban") }),
      );
      return true;
    },
  ],
  [
    "POST /chats/bots/admin",
    (sim, input) => {
      sim.chats.setBotAdmin(
        input.chat(),
        input.bool("is_admin") ?? true,
        input.optional({ bot: input.bot(), by: input.int("by_id") }),
      );
      return true;
    },
  ],
  [
    "POST /messages/text",
    (sim, input) =>
      sim.sendText(
        input.requiredInt("user_id"),
        input.chat(),
        input.requiredString("text"),
        input.optional({ bot: input.bot(), replyTo: input.int("reply_to_message_id") }),
      ),
  ],
  [
    "POST /messages/command",
    (sim, input) =>
      sim.sendCommand(
        input.requiredInt("user_id"),
        input.chat(),
        input.requiredString("command"),
        input.string("args"),
        input.optional({ bot: input.bot(), replyTo: input.int("reply_to_message_id") }),
      ),
  ],
  ...(["document", "photo"] as const).map((kind): [string, Route] => [
    `POST /messages/${kind}`,
    (sim, input) => {
      const file = {
        bytes: Buffer.from(input.requiredString("content_base64"), "base64"),
        ...input.optional({
          fileName: input.string("file_name"),
          mimeType: input.string("mime_type"),
        }),
      };
      const options = input.optional({
        bot: input.bot(),
        caption: input.string("caption"),
        replyTo: input.int("reply_to_message_id"),
      });
      const user = input.requiredInt("user_id");
      return kind === "document"
        ? sim.sendDocument(user, input.chat(), file, options)
        : sim.sendPhoto(user, input.chat(), file, options);
    },
  ]),
  [
    "POST /messages/edit",
    (sim, input) =>
      sim.editText(
        input.requiredInt("user_id"),
        input.chat(),
        input.requiredInt("message_id"),
        input.requiredString("text"),
        input.optional({ bot: input.bot() }),
      ),
  ],
  [
    "POST /drafts/stop",
    (sim, input) =>
      sim.stopDraft(
        input.requiredInt("user_id"),
        input.chat(),
        input.optional({ bot: input.bot() }),
      ),
  ],
  [
    "POST /callbacks",
    (sim, input) =>
      sim.pressButton(
        input.requiredInt("user_id"),
        input.chat(),
        input.requiredInt("message_id"),
        input.requiredString("data"),
        input.optional({ bot: input.bot() }),
      ),
  ],
  [
    "GET /callbacks/answer",
    (sim, input) =>
      sim.callbackAnswer(
        input.requiredString("callback_query_id"),
        input.optional({ bot: input.bot() }),
      ) ?? null,
  ],
  [
    "GET /transcript",
    (sim, input) => sim.transcript(input.chat(), input.optional({ bot: input.bot() })),
  ],
  [
    "POST /wait/message",
    (sim, input) => {
      const contains = input.string("text_contains");
      return sim.waitForMessage(
        input.chat(),
        contains === undefined
          ? undefined
          : (message) => ((message as { text?: string }).text ?? "").includes(contains),
        input.optional({
          bot: input.bot(),
          afterMessageId: input.int("after_message_id"),
          timeoutMs: input.number("timeout_ms"),
        }),
      );
    },
  ],
  ["POST /faults", (sim, input) => addFault(sim.faults, input)],
  [
    "POST /faults/latency",
    (sim, input) => {
      sim.faults.setLatency(
        input.number("ms") ?? 0,
        input.optional({
          jitterMs: input.number("jitter_ms"),
          methods: input.stringArray("methods"),
        }),
      );
      return true;
    },
  ],
  [
    "POST /faults/error-rate",
    (sim, input) => {
      sim.faults.setErrorRate(
        input.number("rate") ?? 0,
        input.optional({ code: input.int("code"), methods: input.stringArray("methods") }),
      );
      return true;
    },
  ],
  [
    "POST /faults/clear",
    (sim) => {
      sim.faults.clear();
      return true;
    },
  ],
  [
    "POST /rate-limits",
    (sim, input) => {
      if (input.bool("enabled") === false) {
        sim.setRateLimits(false);
      } else {
        sim.setRateLimits(
          input.optional({
            perChatPerSecond: input.number("per_chat_per_second"),
            perChatBurst: input.int("per_chat_burst"),
            groupPerMinute: input.int("group_per_minute"),
            globalPerSecond: input.number("global_per_second"),
            globalBurst: input.int("global_burst"),
            countEdits: input.bool("count_edits"),
            draftsPerSecond: input.number("drafts_per_second"),
            draftBurst: input.int("draft_burst"),
          }),
        );
      }
      return sim.rateLimits;
    },
  ],
  [
    "POST /files/range",
    (sim, input) => {
      sim.setRangeRequests(input.bool("enabled") ?? true);
      return sim.rangeRequests;
    },
  ],
]);
