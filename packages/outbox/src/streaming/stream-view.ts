// What a stream's caller hands it and reads back: the options of a replace, the live snapshot.

import type { MessageEntity } from "@grammyjs/types";
import type { StreamMode } from "./stream-outcome.js";

/** Options of {@link MessageStream.replace}. */
export interface ReplaceOptions {
  /** Explicit entities of the whole text (instead of a `parseMode`). */
  readonly entities?: readonly MessageEntity[] | undefined;
}

/** A live view of a stream. */
export interface MessageStreamSnapshot {
  readonly state: "streaming" | "finishing" | "ended";
  readonly mode: StreamMode;
  readonly draftId: number | undefined;
  readonly textLength: number;
  readonly messages: number;
  readonly draftFrames: number;
  readonly edits: number;
  readonly stopped: boolean;
}
