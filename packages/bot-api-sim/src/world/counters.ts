// Monotonic counters of what the simulator did: calls per method, responses per status, 429s per
// chat, bytes in and out. Read as a fresh frozen snapshot.

/** A snapshot of the simulator's counters. Every number only ever grows. */
export interface SimCounters {
  /** HTTP requests received on the Bot API and file routes. */
  readonly requests: number;
  /** Bot API calls per canonical method name (unknown names under `"<unknown>"`). */
  readonly calls: Readonly<Record<string, number>>;
  /** Bot API and file responses per HTTP status code. */
  readonly responses: Readonly<Record<string, number>>;
  /** 429s issued by the flood limits (injected 429 faults are not counted here). */
  readonly tooManyRequests: number;
  /** Flood-limit 429s per chat id. */
  readonly tooManyRequestsByChat: Readonly<Record<string, number>>;
  /** 409s issued (competing pollers, active webhook). */
  readonly conflicts: number;
  /** Faults injected (failures, resets, malformed bodies, random errors). */
  readonly faultsInjected: number;
  /** Updates queued for bots. */
  readonly updatesQueued: number;
  /** Updates handed out by getUpdates (an update handed out twice counts twice). */
  readonly updatesDelivered: number;
  /** POSTs of updates to webhooks that got an answer or failed (each retry counts). */
  readonly webhookRequests: number;
  /** Updates a webhook confirmed with a 2xx. */
  readonly webhookConfirmed: number;
  /** Webhook POSTs answered with a non-2xx, failed to connect or timed out. */
  readonly webhookFailures: number;
  /** Updates whose webhook delivery was given up because they would expire before a retry. */
  readonly webhookDropped: number;
  /** Methods run from a webhook's answer (webhook replies). */
  readonly webhookReplies: number;
  /** Updates not queued because the bot's allowed_updates excluded their type. */
  readonly updatesFiltered: number;
  /** Messages sent, edited and deleted by bots. */
  readonly messagesSent: number;
  readonly messagesEdited: number;
  readonly messagesDeleted: number;
  /** File bytes received in uploads (bots and simulated users). */
  readonly bytesUploaded: number;
  /** File bytes sent in downloads. */
  readonly bytesServed: number;
  /** Transcript events dropped at `maxTranscriptEvents`. */
  readonly transcriptEventsDropped: number;
  /** sendMessageDraft frames accepted (refused ones are not counted). */
  readonly draftFrames: number;
  /** Presses of a draft's Stop button that reached the bot. */
  readonly draftsStopped: number;
  /** Connections closed with 408 because their headers took longer than `headersTimeoutMs`. */
  readonly headersTimedOut: number;
  /** Connections displaced (idle, waiting for headers) or refused at `maxConnections`. */
  readonly connectionsShed: number;
  /** Chat page event streams cut because their client fell more than 1 MiB behind. */
  readonly eventStreamsCut: number;
}

type NumericKey = {
  [K in keyof SimCounters]: SimCounters[K] extends number ? K : never;
}[keyof SimCounters];

/** Mutable counters behind {@link SimCounters}. */
export class Counters {
  readonly #numbers: Record<NumericKey, number> = {
    requests: 0,
    tooManyRequests: 0,
    conflicts: 0,
    faultsInjected: 0,
    updatesQueued: 0,
    updatesDelivered: 0,
    updatesFiltered: 0,
    webhookRequests: 0,
    webhookConfirmed: 0,
    webhookFailures: 0,
    webhookDropped: 0,
    webhookReplies: 0,
    messagesSent: 0,
    messagesEdited: 0,
    messagesDeleted: 0,
    bytesUploaded: 0,
    bytesServed: 0,
    transcriptEventsDropped: 0,
    draftFrames: 0,
    draftsStopped: 0,
    headersTimedOut: 0,
    connectionsShed: 0,
    eventStreamsCut: 0,
  };
  readonly #calls = new Map<string, number>();
  readonly #responses = new Map<string, number>();
  readonly #tooManyByChat = new Map<string, number>();

  add(key: NumericKey, amount = 1): void {
    this.#numbers[key] += amount;
  }

  call(method: string): void {
    this.#calls.set(method, (this.#calls.get(method) ?? 0) + 1);
  }

  response(status: number): void {
    const key = String(status);
    this.#responses.set(key, (this.#responses.get(key) ?? 0) + 1);
  }

  tooManyRequests(chatId: number): void {
    this.#numbers.tooManyRequests++;
    const key = String(chatId);
    this.#tooManyByChat.set(key, (this.#tooManyByChat.get(key) ?? 0) + 1);
  }

  snapshot(): SimCounters {
    return Object.freeze({
      ...this.#numbers,
      calls: Object.freeze(Object.fromEntries(this.#calls)),
      responses: Object.freeze(Object.fromEntries(this.#responses)),
      tooManyRequestsByChat: Object.freeze(Object.fromEntries(this.#tooManyByChat)),
    });
  }
}
