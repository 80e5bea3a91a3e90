// What changed in the world, told synchronously to in-process observers (the chat page's event
// stream): transcript events, new chats and users, callback answers, 429s and injected faults.
// Observers cannot break the code that changed the world: a throwing one is dropped.

import type { User } from "@grammyjs/types";
import type { FaultMessage } from "../diagnostics.js";
import type { CallbackAnswer } from "./bot-record.js";
import type { ChatRecord } from "./chat-record.js";
import type { RateScope } from "./rate-limiter.js";
import type { TranscriptEvent } from "./transcript.js";

/** One change of the world. */
export type WorldEvent =
  | { readonly type: "transcript"; readonly chat: ChatRecord; readonly event: TranscriptEvent }
  | { readonly type: "chat"; readonly chat: ChatRecord }
  | { readonly type: "user"; readonly user: User }
  | {
      readonly type: "callback_answer";
      readonly chatKey: string;
      readonly callbackQueryId: string;
      readonly answer: CallbackAnswer;
    }
  | {
      readonly type: "rate_limited";
      readonly chat: ChatRecord;
      readonly botId: number;
      readonly method: string;
      readonly retryAfter: number;
      readonly scope: RateScope;
    }
  | { readonly type: "fault"; readonly method: string; readonly fault: FaultMessage["fault"] }
  | { readonly type: "closed" };

/** Receives world events; it must not throw (one that does is unsubscribed). */
export type WorldObserver = (event: WorldEvent) => void;

/** The observers of one world. */
export class WorldEvents {
  readonly #observers = new Set<WorldObserver>();

  /** Adds an observer; returns its unsubscribe. */
  subscribe(observer: WorldObserver): () => void {
    this.#observers.add(observer);
    return () => {
      this.#observers.delete(observer);
    };
  }

  /** Tells every observer, in subscription order. */
  emit(event: WorldEvent): void {
    if (this.#observers.size === 0) return;
    for (const observer of [...this.#observers]) {
      try {
        observer(event);
      } catch {
        this.#observers.delete(observer);
      }
    }
  }
}
