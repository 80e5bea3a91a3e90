// What a stream needs from the registry that opened it: the outbox and transport, draft ids, and
// what the registry remembers per chat (refused drafts, a learned draft pace, the newest message).

import type { Clock } from "@telepace/core";
import type { TelegramOutbox } from "../outbox.js";
import type { LearnedDraftPace } from "./draft-pacer.js";
import type { StreamTransport } from "./stream-options.js";

/**
 * What a stream needs from the registry that opened it. `Stream` is the stream's own class: the
 * host hands it back to the registry as it is, and needs nothing of it here.
 */
export interface StreamHost<Stream> {
  readonly outbox: TelegramOutbox;
  readonly transport: StreamTransport;
  readonly clock: Clock;
  /** A fresh draft id, routed to this stream for Stop presses. */
  nextDraftId(stream: Stream): number;
  /** Whether drafts are known to be refused in this chat. */
  draftsRefused(chatKey: string): boolean;
  /** The draft pace a new stream into this chat starts from: the chat's own, else the prior. */
  draftPace(chatKey: string): LearnedDraftPace | undefined;
  /** Remembers the draft pace a 429 taught in this chat. */
  learnDraftPace(chatKey: string, pace: LearnedDraftPace): void;
  /** Remembers a refusal: for this chat, or for every chat (the server lacks the method). */
  refuseDrafts(chatKey: string, everywhere: boolean): void;
  /** A message of the stream's own is in the chat. */
  noteMessage(chatKey: string, messageId: number): void;
  /** Whether no message newer than `messageId` is known in the chat. */
  isNewest(chatKey: string, messageId: number): boolean;
  /** The stream ended: forget its draft ids. */
  release(stream: Stream): void;
}
