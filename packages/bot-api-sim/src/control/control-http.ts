// The HTTP mirror of the control API under /_sim, for tools that are not in-process (the CLI's
// users, black-box tests, other languages). Same envelope as the Bot API; snake_case fields.

import type { IncomingMessage, ServerResponse } from "node:http";
import type { BotApiSim } from "../bot-api-sim.js";
import { BotApiSimError, type BotApiSimErrorCode } from "../errors.js";
import { IMPLEMENTED_METHODS } from "../methods/method-table.js";
import { failureResponse, sendJson } from "../server/http-server.js";
import { ApiFailure } from "../wire/api-failure.js";
import type { FaultInjector } from "../wire/faults.js";
import { ClientGoneError, readBody } from "../wire/request-body.js";
import type { BotRef, ChatRef } from "../world/sim-world.js";

/** Largest control request body (documents travel base64-encoded). */
const MAX_CONTROL_BODY_BYTES = 96 * 1024 * 1024;

/** The fields of one control request, from the query string and a JSON object body. */
class ControlInput {
  readonly #values: Record<string, unknown>;

  constructor(values: Record<string, unknown>) {
    this.#values = values;
  }

  has(name: string): boolean {
    return this.#values[name] !== undefined && this.#values[name] !== null;
  }

  string(name: string): string | undefined {
    const value = this.#values[name];
    if (value === undefined || value === null) return undefined;
    if (typeof value !== "string") {
      throw new TypeError(`Expected \`${name}\` to be a string, got ${JSON.stringify(value)}`);
    }
    return value;
  }

  requiredString(name: string): string {
    const value = this.string(name);
    if (value === undefined)
      throw new TypeError(`Expected \`${name}\` to be a string, got undefined`);
    return value;
  }

  number(name: string): number | undefined {
    const value = this.#values[name];
    if (value === undefined || value === null) return undefined;
    const number = typeof value === "string" && value.trim() !== "" ? Number(value) : value;
    if (typeof number !== "number" || !Number.isFinite(number)) {
      throw new TypeError(`Expected \`${name}\` to be a number, got ${JSON.stringify(value)}`);
    }
    return number;
  }

  int(name: string): number | undefined {
    const value = this.number(name);
    if (value !== undefined && !Number.isSafeInteger(value)) {
      throw new TypeError(`Expected \`${name}\` to be an integer, got ${value}`);
    }
    return value;
  }

  requiredInt(name: string): number {
    const value = this.int(name);
    if (value === undefined)
      throw new TypeError(`Expected \`${name}\` to be an integer, got undefined`);
    return value;
  }

  bool(name: string): boolean | undefined {
    const value = this.#values[name];
    if (value === undefined || value === null) return undefined;
    if (value === true || value === "true" || value === "1") return true;
    if (value === false || value === "false" || value === "0") return false;
    throw new TypeError(`Expected \`${name}\` to be a boolean, got ${JSON.stringify(value)}`);
  }

  intArray(name: string): number[] | undefined {
    const value = this.#values[name];
    if (value === undefined || value === null) return undefined;
    const items = typeof value === "string" ? value.split(",") : value;
    if (!Array.isArray(items))
      throw new TypeError(`Expected \`${name}\` to be an array of integers`);
    return items.map((item: unknown, index) => {
      const number = typeof item === "string" && item.trim() !== "" ? Number(item) : item;
      if (typeof number !== "number" || !Number.isSafeInteger(number)) {
        throw new TypeError(
          `Expected \`${name}[${index}]\` to be an integer, got ${JSON.stringify(item)}`,
        );
      }
      return number;
    });
  }

  stringArray(name: string): string[] | undefined {
    const value = this.#values[name];
    if (value === undefined || value === null) return undefined;
    const items = typeof value === "string" ? value.split(",") : value;
    if (!Array.isArray(items) || items.some((item) => typeof item !== "string")) {
      throw new TypeError(`Expected \`${name}\` to be an array of strings`);
    }
    return items as string[];
  }

  /** `bot_id` as a bot reference. */
  bot(): BotRef | undefined {
    return this.int("bot_id");
  }

  /** `chat_id` as a chat reference. */
  chat(): ChatRef {
    return this.requiredInt("chat_id");
  }

  /** Fields that are set, for the options objects of the programmatic API. */
  optional<T extends Record<string, unknown>>(
    fields: T,
  ): { [K in keyof T]: Exclude<T[K], undefined> } {
    return Object.fromEntries(
      Object.entries(fields).filter(([, value]) => value !== undefined),
    ) as never;
  }
}

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

const ROUTES: ReadonlyMap<string, Route> = new Map<string, Route>([
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

function statusFor(code: BotApiSimErrorCode): number {
  switch (code) {
    case "ERR_UNKNOWN_BOT":
    case "ERR_UNKNOWN_USER":
    case "ERR_UNKNOWN_CHAT":
    case "ERR_UNKNOWN_MESSAGE":
      return 404;
    case "ERR_WAIT_TIMEOUT":
      return 408;
    case "ERR_SIM_CLOSED":
      return 503;
    case "ERR_STORAGE_FULL":
      return 413;
    default:
      return 400;
  }
}

async function readInput(req: IncomingMessage, query: string): Promise<ControlInput> {
  const values: Record<string, unknown> = Object.fromEntries(new URLSearchParams(query));
  if (req.method === "POST") {
    const body = await readBody(req, MAX_CONTROL_BODY_BYTES);
    const text = body.toString("utf8").trim();
    if (text.length > 0) {
      let parsed: unknown;
      try {
        parsed = JSON.parse(text);
      } catch {
        throw new TypeError("Expected the control request body to be a JSON object");
      }
      if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) {
        throw new TypeError("Expected the control request body to be a JSON object");
      }
      Object.assign(values, parsed);
    }
  } else {
    req.resume();
  }
  return new ControlInput(values);
}

/** Answers one control request; `path` is relative to the control prefix. */
export async function handleControl(
  sim: BotApiSim,
  req: IncomingMessage,
  res: ServerResponse,
  path: string,
  query: string,
): Promise<void> {
  const route = ROUTES.get(
    `${req.method ?? "GET"} ${path === "" ? "/" : path.replace(/\/+$/, "") || "/"}`,
  );
  if (route === undefined) {
    req.resume();
    sendJson(res, 404, {
      ok: false,
      error_code: 404,
      description: "Not Found: no such control route",
    });
    return;
  }
  try {
    const input = await readInput(req, query);
    const result = await route(sim, input);
    sendJson(res, 200, { ok: true, result: result === undefined ? true : result });
  } catch (error) {
    if (error instanceof ClientGoneError) {
      res.destroy();
      return;
    }
    if (error instanceof BotApiSimError) {
      const status = statusFor(error.code);
      sendJson(res, status, {
        ok: false,
        error_code: status,
        description: error.message,
        code: error.code,
      });
      return;
    }
    if (error instanceof TypeError || error instanceof RangeError) {
      sendJson(res, 400, {
        ok: false,
        error_code: 400,
        description: `${error.name}: ${error.message}`,
      });
      return;
    }
    if (error instanceof ApiFailure) {
      const { body, headers } = failureResponse(error);
      sendJson(res, error.errorCode, body, headers);
      return;
    }
    throw error;
  }
}
