// A scripted Bot API for stream tests: records every call with its clock time, answers after a
// latency on the ManualClock, and lets a test make a method fail by a rule.

import { ManualClock } from "@telepace/core";
import {
  type StreamMethod,
  StreamRegistry,
  type StreamTransport,
  TelegramOutbox,
  type TelegramOutboxOptions,
} from "../../src/index.js";

/** One recorded request. */
export interface StreamCall {
  readonly method: StreamMethod;
  readonly params: Record<string, unknown>;
  readonly startedAt: number;
  endedAt: number | undefined;
}

/** What a rule answers: throw this, or undefined to answer normally. */
export type FailureRule = (call: StreamCall, index: number) => unknown;

/** A transport whose answers take `latencyMs` of clock time. */
export class ScriptedTransport {
  readonly calls: StreamCall[] = [];
  readonly rules = new Map<StreamMethod, FailureRule>();
  #nextMessageId = 1;
  #inFlight = 0;
  maxInFlight = 0;

  constructor(
    private readonly clock: ManualClock,
    readonly latencyMs = 10,
  ) {}

  readonly transport: StreamTransport = async (method, params, signal) => {
    const call: StreamCall = { method, params, startedAt: this.clock.now(), endedAt: undefined };
    const index = this.calls.filter((c) => c.method === method).length;
    this.calls.push(call);
    this.#inFlight++;
    this.maxInFlight = Math.max(this.maxInFlight, this.#inFlight);
    try {
      await this.clock.sleep(this.latencyMs, { signal });
      const failure = this.rules.get(method)?.(call, index);
      if (failure !== undefined) throw failure;
      switch (method) {
        case "sendMessage":
        case "editMessageText":
          return {
            message_id:
              method === "sendMessage" ? this.#nextMessageId++ : (params.message_id as number),
            date: 0,
            chat: { id: params.chat_id, type: "private", first_name: "A" },
            text: params.text,
          };
        default:
          return true;
      }
    } finally {
      this.#inFlight--;
      call.endedAt = this.clock.now();
    }
  };

  /** Calls of one method. */
  of(method: StreamMethod): StreamCall[] {
    return this.calls.filter((call) => call.method === method);
  }

  /** The texts of one method's calls. */
  texts(method: StreamMethod): string[] {
    return this.of(method).map((call) => String(call.params.text ?? ""));
  }
}

/** An outbox on a ManualClock, a scripted transport answering after `latencyMs`, a registry. */
export function setupStreams(outboxOptions: TelegramOutboxOptions = {}, latencyMs = 10) {
  const clock = new ManualClock();
  const outbox = new TelegramOutbox({ clock, pacingMarginMs: 0, ...outboxOptions });
  const api = new ScriptedTransport(clock, latencyMs);
  const streams = new StreamRegistry({ outbox, transport: api.transport, clock });
  return { clock, outbox, api, streams };
}

/**
 * The draft floor is a rate: any run of frames from the i-th to the j-th start spans at least
 * (j - i - 1) floors (two may start back to back, then one per floor on average).
 */
export function expectFloorKept(starts: readonly number[], floorMs = 34): void {
  for (let i = 0; i < starts.length; i++) {
    for (let j = i + 2; j < starts.length; j++) {
      const span = (starts[j] as number) - (starts[i] as number);
      if (span < (j - i - 1) * floorMs - 1e-6) {
        throw new Error(`Frames ${i}..${j} started within ${span} ms, under ${j - i - 1} floors`);
      }
    }
  }
}
