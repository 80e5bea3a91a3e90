// The routes of the HTTP control API: each maps snake_case fields onto one call of the
// in-process control API and returns what it returns.

import { IMPLEMENTED_METHODS } from "../methods/method-table.js";
import type { FaultInjector } from "../wire/faults.js";
import type { BotApiSim } from "./bot-api-sim.js";
import type { ControlInput } from "./control-input.js";

/** One control route: the fields it takes and what it does with them. */
export interface Route {
  /** Every field the route reads; any other field in a request is refused, naming the closest. */
  readonly fields: readonly string[];
  readonly run: (sim: BotApiSim, input: ControlInput) => unknown;
}

function route(fields: readonly string[], run: Route["run"]): Route {
  return { fields, run };
}

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
    route([], (sim) => ({
      api_root: sim.apiRoot,
      bots: sim.bots.map((bot) => bot.user),
      implemented_methods: IMPLEMENTED_METHODS,
    })),
  ],
  ["GET /state", route([], (sim) => sim.snapshot())],
  ["GET /counters", route([], (sim) => sim.counters())],
  [
    "POST /users",
    route(["first_name", "last_name", "username", "language_code", "is_premium"], (sim, input) =>
      sim.users.create(
        input.optional({
          firstName: input.string("first_name"),
          lastName: input.string("last_name"),
          username: input.string("username"),
          languageCode: input.string("language_code"),
          isPremium: input.bool("is_premium"),
        }),
      ),
    ),
  ],
  [
    "POST /users/block",
    route(["user_id", "bot_id"], (sim, input) => {
      sim.users.block(input.requiredInt("user_id"), input.optional({ bot: input.bot() }));
      return true;
    }),
  ],
  [
    "POST /users/unblock",
    route(["user_id", "bot_id"], (sim, input) => {
      sim.users.unblock(input.requiredInt("user_id"), input.optional({ bot: input.bot() }));
      return true;
    }),
  ],
  [
    "POST /chats/private",
    route(["user_id", "started", "bot_id"], (sim, input) =>
      sim.chats.createPrivate(
        input.requiredInt("user_id"),
        input.optional({ bot: input.bot(), started: input.bool("started") }),
      ),
    ),
  ],
  ...(["group", "supergroup"] as const).map((kind): [string, Route] => [
    `POST /chats/${kind}`,
    route(["member_ids", "title", "creator_id", "bot_ids", "bots_are_admins"], (sim, input) => {
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
    }),
  ]),
  [
    "POST /chats/migrate",
    route(["by_id", "chat_id"], (sim, input) =>
      sim.chats.migrateToSupergroup(input.chat(), input.optional({ by: input.int("by_id") })),
    ),
  ],
  [
    "POST /chats/members/add",
    route(["user_id", "by_id", "chat_id"], (sim, input) => {
      sim.chats.addMember(
        input.chat(),
        input.requiredInt("user_id"),
        input.optional({ by: input.int("by_id") }),
      );
      return true;
    }),
  ],
  [
    "POST /chats/members/remove",
    route(["user_id", "by_id", "ban", "chat_id"], (sim, input) => {
      sim.chats.removeMember(
        input.chat(),
        input.requiredInt("user_id"),
        input.optional({ by: input.int("by_id"), ban: input.bool("ban") }),
      );
      return true;
    }),
  ],
  [
    "POST /chats/bots/add",
    route(["by_id", "as_admin", "bot_id", "chat_id"], (sim, input) => {
      sim.chats.addBot(
        input.chat(),
        input.optional({
          bot: input.bot(),
          by: input.int("by_id"),
          asAdmin: input.bool("as_admin"),
        }),
      );
      return true;
    }),
  ],
  [
    "POST /chats/bots/remove",
    route(["by_id", "ban", "bot_id", "chat_id"], (sim, input) => {
      sim.chats.removeBot(
        input.chat(),
        input.optional({ bot: input.bot(), by: input.int("by_id"), ban: input.bool("ban") }),
      );
      return true;
    }),
  ],
  [
    "POST /chats/bots/admin",
    route(["is_admin", "by_id", "bot_id", "chat_id"], (sim, input) => {
      sim.chats.setBotAdmin(
        input.chat(),
        input.bool("is_admin") ?? true,
        input.optional({ bot: input.bot(), by: input.int("by_id") }),
      );
      return true;
    }),
  ],
  [
    "POST /messages/text",
    route(["user_id", "text", "reply_to_message_id", "bot_id", "chat_id"], (sim, input) =>
      sim.sendText(
        input.requiredInt("user_id"),
        input.chat(),
        input.requiredString("text"),
        input.optional({ bot: input.bot(), replyTo: input.int("reply_to_message_id") }),
      ),
    ),
  ],
  [
    "POST /messages/command",
    route(
      ["user_id", "command", "args", "reply_to_message_id", "bot_id", "chat_id"],
      (sim, input) =>
        sim.sendCommand(
          input.requiredInt("user_id"),
          input.chat(),
          input.requiredString("command"),
          input.string("args"),
          input.optional({ bot: input.bot(), replyTo: input.int("reply_to_message_id") }),
        ),
    ),
  ],
  ...(["document", "photo"] as const).map((kind): [string, Route] => [
    `POST /messages/${kind}`,
    route(
      [
        "content_base64",
        "file_name",
        "mime_type",
        "caption",
        "reply_to_message_id",
        "user_id",
        "bot_id",
        "chat_id",
      ],
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
    ),
  ]),
  [
    "POST /messages/edit",
    route(["user_id", "message_id", "text", "bot_id", "chat_id"], (sim, input) =>
      sim.editText(
        input.requiredInt("user_id"),
        input.chat(),
        input.requiredInt("message_id"),
        input.requiredString("text"),
        input.optional({ bot: input.bot() }),
      ),
    ),
  ],
  [
    "POST /drafts/stop",
    route(["user_id", "bot_id", "chat_id"], (sim, input) =>
      sim.stopDraft(
        input.requiredInt("user_id"),
        input.chat(),
        input.optional({ bot: input.bot() }),
      ),
    ),
  ],
  [
    "POST /callbacks",
    route(["user_id", "message_id", "data", "bot_id", "chat_id"], (sim, input) =>
      sim.pressButton(
        input.requiredInt("user_id"),
        input.chat(),
        input.requiredInt("message_id"),
        input.requiredString("data"),
        input.optional({ bot: input.bot() }),
      ),
    ),
  ],
  [
    "GET /callbacks/answer",
    route(
      ["callback_query_id", "bot_id"],
      (sim, input) =>
        sim.callbackAnswer(
          input.requiredString("callback_query_id"),
          input.optional({ bot: input.bot() }),
        ) ?? null,
    ),
  ],
  [
    "GET /transcript",
    route(["bot_id", "chat_id"], (sim, input) =>
      sim.transcript(input.chat(), input.optional({ bot: input.bot() })),
    ),
  ],
  [
    "POST /wait/message",
    route(
      ["text_contains", "after_message_id", "timeout_ms", "bot_id", "chat_id"],
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
    ),
  ],
  [
    "POST /faults",
    route(
      ["method", "kind", "count", "after_processing", "code", "description", "retry_after"],
      (sim, input) => addFault(sim.faults, input),
    ),
  ],
  [
    "POST /faults/latency",
    route(["ms", "jitter_ms", "methods"], (sim, input) => {
      sim.faults.setLatency(
        input.number("ms") ?? 0,
        input.optional({
          jitterMs: input.number("jitter_ms"),
          methods: input.stringArray("methods"),
        }),
      );
      return true;
    }),
  ],
  [
    "POST /faults/error-rate",
    route(["rate", "code", "methods"], (sim, input) => {
      sim.faults.setErrorRate(
        input.number("rate") ?? 0,
        input.optional({ code: input.int("code"), methods: input.stringArray("methods") }),
      );
      return true;
    }),
  ],
  [
    "POST /faults/clear",
    route([], (sim) => {
      sim.faults.clear();
      return true;
    }),
  ],
  [
    "POST /rate-limits",
    route(
      [
        "enabled",
        "per_chat_per_second",
        "per_chat_burst",
        "group_per_minute",
        "global_per_second",
        "global_burst",
        "count_edits",
        "drafts_per_second",
        "draft_burst",
      ],
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
    ),
  ],
  [
    "POST /updates/restart-ids",
    route(["next_update_id", "bot_id"], (sim, input) => {
      sim.restartUpdateIds({
        nextId: input.requiredInt("next_update_id"),
        ...input.optional({ bot: input.bot() }),
      });
      return true;
    }),
  ],
  [
    "POST /files/range",
    route(["enabled"], (sim, input) => {
      sim.setRangeRequests(input.bool("enabled") ?? true);
      return sim.rangeRequests;
    }),
  ],
]);
