// The public types of the simulator, checked by the compiler (vitest's typecheck): start() and
// its readonly options with unknown keys refused, readonly transcripts whose event kinds are a
// closed set, and coded errors.

import type { Message } from "@grammyjs/types";
import { describe, expectTypeOf, it } from "vitest";
import {
  type BotApiSim,
  type BotApiSimError,
  type BotApiSimErrorCode,
  type BotApiSimOptions,
  type SimCounters,
  start,
  type Transcript,
  type TranscriptEventKind,
} from "../src/index.js";

declare const sim: BotApiSim;

describe("@telepace/bot-api-sim", () => {
  it("starts from readonly options and refuses an unknown key", () => {
    expectTypeOf(start).returns.toEqualTypeOf<Promise<BotApiSim>>();
    expectTypeOf<BotApiSimOptions>().toExtend<{ readonly timeScale?: number }>();
    // @ts-expect-error a misspelt option
    void start({ timescale: 20 });
  });

  it("plays users and reads what the bot did", () => {
    const user = sim.users.create();
    const chat = sim.chats.createPrivate(user);
    expectTypeOf(sim.sendText(user, chat, "hi")).toEqualTypeOf<Message>();
    const transcript = sim.transcript(chat);
    expectTypeOf(transcript).toEqualTypeOf<Transcript>();
    expectTypeOf(transcript.events[0]?.kind).toEqualTypeOf<TranscriptEventKind | undefined>();
    // @ts-expect-error a transcript is read, never written
    transcript.droppedEvents = 0;
    expectTypeOf(sim.counters()).toEqualTypeOf<SimCounters>();
  });

  it("names its errors by code", () => {
    expectTypeOf<BotApiSimError["code"]>().toEqualTypeOf<BotApiSimErrorCode>();
  });
});
