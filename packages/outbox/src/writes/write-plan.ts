// From a Bot API call (method + payload) to how the outbox schedules it: the chat it is paced and
// ordered with, its coalescing key, priority, whether a repeat is harmless, what it supersedes.

import type { ChatId } from "../chat.js";
import { type OutboxOperation, Priority } from "../operation.js";
import {
  classOfMethod,
  EPHEMERAL_EDITS,
  type MethodClass,
  type WriteMethodName,
} from "./method-classes.js";
import { writeKeys } from "./write-keys.js";

/** How the outbox schedules a write: the scheduling fields of its {@link OutboxOperation}. */
export interface WritePlan {
  /** The method's class (see {@link MethodClass}); reads are never planned. */
  readonly methodClass: Exclude<MethodClass, "read">;
  /** The payload's `chat_id`; `undefined` for chat-less calls and inline messages. */
  readonly chatId: ChatId | undefined;
  /** See {@link writeKeys}; `undefined` for an op that is never coalesced (a send). */
  readonly key: string | undefined;
  /** See {@link Priority}. */
  readonly priority: number;
  readonly idempotent: boolean;
  readonly paced: boolean;
  readonly supersedes: readonly string[] | undefined;
}

type Payload = Readonly<Record<string, unknown>>;

function chatOf(payload: Payload): ChatId | undefined {
  const chat = payload.chat_id;
  if (typeof chat === "number" && Number.isSafeInteger(chat)) return chat;
  return typeof chat === "string" && chat.length > 0 ? chat : undefined;
}

function idOf(value: unknown): string | undefined {
  return (typeof value === "number" && Number.isSafeInteger(value)) ||
    (typeof value === "string" && value.length > 0)
    ? String(value)
    : undefined;
}

function ephemeralId(payload: Payload): string | undefined {
  const receiver = idOf(payload.receiver_user_id);
  const message = idOf(payload.ephemeral_message_id);
  return receiver === undefined || message === undefined ? undefined : `${receiver}/${message}`;
}

function plan(
  methodClass: WritePlan["methodClass"],
  chatId: ChatId | undefined,
  fields: Partial<Omit<WritePlan, "methodClass" | "chatId">>,
): WritePlan {
  return {
    methodClass,
    chatId,
    key: fields.key,
    priority: fields.priority ?? Priority.send,
    idempotent: fields.idempotent ?? false,
    paced: fields.paced ?? true,
    supersedes: fields.supersedes,
  };
}

function editPlan(method: string, payload: Payload): WritePlan {
  const chatId = chatOf(payload);
  const messageId = idOf(payload.message_id);
  const inline = idOf(payload.inline_message_id);
  const ephemeral = ephemeralId(payload);
  const target =
    messageId ??
    (inline === undefined ? undefined : `inline:${inline}`) ??
    (ephemeral === undefined ? undefined : `ephemeral:${ephemeral}`);
  const supersedes =
    method === "stopMessageLiveLocation" && target !== undefined
      ? [writeKeys.edit(target, "editMessageLiveLocation")]
      : undefined;
  return plan("edit", inline === undefined ? chatId : undefined, {
    key: target === undefined ? undefined : writeKeys.edit(target, method),
    priority: Priority.edit,
    idempotent: true,
    supersedes,
  });
}

function deletePlan(method: string, payload: Payload): WritePlan {
  const chatId = chatOf(payload);
  if (method === "deleteEphemeralMessage") {
    const ephemeral = ephemeralId(payload);
    const target = ephemeral === undefined ? undefined : `ephemeral:${ephemeral}`;
    return plan("delete", chatId, {
      key: target === undefined ? undefined : writeKeys.delete(target),
      priority: Priority.delete,
      idempotent: true,
      supersedes:
        target === undefined
          ? undefined
          : EPHEMERAL_EDITS.map((edit) => writeKeys.edit(target, edit)),
    });
  }
  const ids =
    method === "deleteMessages" && Array.isArray(payload.message_ids)
      ? payload.message_ids.map(idOf)
      : [idOf(payload.message_id)];
  const known = ids.filter((id): id is string => id !== undefined);
  return plan("delete", chatId, {
    key:
      method === "deleteMessage" && known[0] !== undefined ? writeKeys.delete(known[0]) : undefined,
    priority: Priority.delete,
    idempotent: true,
    supersedes: known.flatMap(writeKeys.editsOf),
  });
}

/**
 * How the outbox schedules `method` with `payload`, by its {@link MethodClass}; `undefined` for a
 * read, which goes straight to the API. A payload field that is missing or malformed leaves what
 * it would name out (no key, no chat), so the op is scheduled safely rather than coalesced wrongly.
 *
 * @example
 * const plan = planWrite("editMessageText", { chat_id: 42, message_id: 7, text: "50%" });
 * // { methodClass: "edit", chatId: 42, key: "edit:7", priority: 2, idempotent: true, … }
 */
export function planWrite(
  method: WriteMethodName,
  payload: Readonly<Record<string, unknown>>,
): WritePlan;
export function planWrite(
  method: string,
  payload: Readonly<Record<string, unknown>>,
): WritePlan | undefined;
export function planWrite(method: string, payload: Payload): WritePlan | undefined {
  const methodClass = classOfMethod(method);
  switch (methodClass) {
    case "read":
      return undefined;
    case "send":
      return plan("send", chatOf(payload), {});
    case "edit":
      return editPlan(method, payload);
    case "draft": {
      // Telegram counts no draft against the chat's messages: frames keep the chat's order and
      // freezes without taking its pacing slots (a stream spaces its own frames).
      const draft = idOf(payload.draft_id);
      return plan("draft", chatOf(payload), {
        key: draft === undefined ? undefined : writeKeys.draft(draft, method),
        priority: Priority.edit,
        idempotent: true,
        paced: false,
      });
    }
    case "delete":
      return deletePlan(method, payload);
    case "chat-action":
      return plan("chat-action", chatOf(payload), {
        key: writeKeys.chatAction(
          idOf(payload.message_thread_id),
          idOf(payload.business_connection_id),
        ),
        idempotent: true,
        paced: false,
      });
    case "callback-answer": {
      const query = idOf(payload.callback_query_id);
      return plan("callback-answer", undefined, {
        key: query === undefined ? undefined : writeKeys.callback(query),
      });
    }
    case "other":
      return plan("other", chatOf(payload), { paced: false });
  }
}

/** The outbox op of a planned write, whose request `execute` makes. */
export function writeOperation<T>(
  plan: WritePlan,
  execute: (signal: AbortSignal) => Promise<T>,
): OutboxOperation<T> {
  return {
    chatId: plan.chatId,
    key: plan.key,
    priority: plan.priority,
    idempotent: plan.idempotent,
    paced: plan.paced,
    supersedes: plan.supersedes,
    execute,
  };
}
