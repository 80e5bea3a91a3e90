// From a grammY call (method + payload) to how the outbox schedules it: the chat it is paced and
// ordered with, its coalescing key, priority, whether a repeat is harmless, what it supersedes.

import { type ChatId, Priority } from "@telepace/outbox";
import {
  classOfMethod,
  EPHEMERAL_EDITS,
  MESSAGE_EDITS,
  type MethodClass,
} from "./method-classes.js";

/** The scheduling fields of an outbox op, decided from the method and its payload. */
export interface OperationPlan {
  readonly methodClass: Exclude<MethodClass, "read">;
  readonly chatId: ChatId | undefined;
  readonly key: string | undefined;
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

/** The key of a message edit: one pending op per (method, message). */
export function editKey(method: string, messageId: number | string): string {
  return `${method}:${messageId}`;
}

/** Every edit key of a message: a delete (or a replacing send) drops them all. */
export function editKeysOf(messageId: number | string): string[] {
  return MESSAGE_EDITS.map((method) => editKey(method, messageId));
}

function ephemeralId(payload: Payload): string | undefined {
  const receiver = idOf(payload.receiver_user_id);
  const message = idOf(payload.ephemeral_message_id);
  return receiver === undefined || message === undefined ? undefined : `${receiver}/${message}`;
}

function plan(
  methodClass: OperationPlan["methodClass"],
  chatId: ChatId | undefined,
  fields: Partial<Omit<OperationPlan, "methodClass" | "chatId">>,
): OperationPlan {
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

function editPlan(method: string, payload: Payload): OperationPlan {
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
      ? [editKey("editMessageLiveLocation", target)]
      : undefined;
  return plan("edit", inline === undefined ? chatId : undefined, {
    key: target === undefined ? undefined : editKey(method, target),
    priority: Priority.edit,
    idempotent: true,
    supersedes,
  });
}

function deletePlan(method: string, payload: Payload): OperationPlan {
  const chatId = chatOf(payload);
  if (method === "deleteEphemeralMessage") {
    const ephemeral = ephemeralId(payload);
    return plan("delete", chatId, {
      key: ephemeral === undefined ? undefined : `delete:ephemeral:${ephemeral}`,
      priority: Priority.delete,
      idempotent: true,
      supersedes:
        ephemeral === undefined
          ? undefined
          : EPHEMERAL_EDITS.map((edit) => editKey(edit, `ephemeral:${ephemeral}`)),
    });
  }
  const ids =
    method === "deleteMessages" && Array.isArray(payload.message_ids)
      ? payload.message_ids.map(idOf)
      : [idOf(payload.message_id)];
  const known = ids.filter((id): id is string => id !== undefined);
  return plan("delete", chatId, {
    key: method === "deleteMessage" && known[0] !== undefined ? `delete:${known[0]}` : undefined,
    priority: Priority.delete,
    idempotent: true,
    supersedes: known.flatMap(editKeysOf),
  });
}

/**
 * How the outbox schedules `method` with `payload`, or `undefined` for a read, which passes
 * straight through.
 */
export function planOperation(method: string, payload: Payload): OperationPlan | undefined {
  const methodClass = classOfMethod(method);
  switch (methodClass) {
    case "read":
      return undefined;
    case "send":
      return plan("send", chatOf(payload), {});
    case "edit":
      return editPlan(method, payload);
    case "draft": {
      const draft = idOf(payload.draft_id);
      return plan("draft", chatOf(payload), {
        key: draft === undefined ? undefined : `${method}:${draft}`,
        priority: Priority.edit,
        idempotent: true,
      });
    }
    case "delete":
      return deletePlan(method, payload);
    case "chat-action": {
      const thread = idOf(payload.message_thread_id) ?? "";
      const business = idOf(payload.business_connection_id) ?? "";
      return plan("chat-action", chatOf(payload), {
        key: `chat-action:${business}:${thread}`,
        idempotent: true,
        paced: false,
      });
    }
    case "callback-answer": {
      const query = idOf(payload.callback_query_id);
      return plan("callback-answer", undefined, {
        key: query === undefined ? undefined : `callback:${query}`,
      });
    }
    case "other":
      return plan("other", chatOf(payload), { paced: false });
  }
}
