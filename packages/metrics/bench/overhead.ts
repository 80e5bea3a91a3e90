// What the metrics cost: outbox throughput with and without instrumentation (events on every op),
// and one collection over 1,000 waiting chats (a snapshot read, by kind or per chat).
// Run: pnpm --filter @telepace/metrics bench

import { MeterProvider, MetricReader } from "@opentelemetry/sdk-metrics";
import { createDeferred, ManualClock } from "@telepace/core";
import { instrumentTelepace } from "@telepace/metrics";
import { TelegramOutbox } from "@telepace/outbox";
import { Bench } from "tinybench";

class OnDemandReader extends MetricReader {
  protected override onShutdown(): Promise<void> {
    return Promise.resolve();
  }
  protected override onForceFlush(): Promise<void> {
    return Promise.resolve();
  }
}

const CHATS = 1_000;
const OPS = 5_000;

function pipeline() {
  const reader = new OnDemandReader();
  const provider = new MeterProvider({ readers: [reader] });
  return { reader, meter: provider.getMeter("bench") };
}

function unpacedOutbox(clock: ManualClock): TelegramOutbox {
  return new TelegramOutbox({
    clock,
    privateChatRps: 0,
    groupChatRps: 0,
    globalRps: 0,
    maxInFlight: CHATS,
  });
}

async function deliverAll(instrumented: boolean): Promise<void> {
  const clock = new ManualClock();
  const outbox = unpacedOutbox(clock);
  const metrics = instrumented
    ? instrumentTelepace({ meter: pipeline().meter, outbox, clock })
    : undefined;
  const done: Promise<unknown>[] = [];
  for (let i = 0; i < OPS; i++) {
    const chatId = i % CHATS;
    const key = i % 2 === 0 ? `edit:${i % 7}` : undefined;
    done.push(outbox.enqueue({ chatId, key, execute: () => Promise.resolve(i) }));
  }
  await Promise.all(done);
  metrics?.stop();
  await outbox.close();
}

async function waitingChats(maxPerChatSeries: number) {
  const clock = new ManualClock();
  const outbox = unpacedOutbox(clock);
  const { reader, meter } = pipeline();
  instrumentTelepace({ meter, outbox, clock, maxPerChatSeries });
  const gate = createDeferred<void>();
  for (let i = 0; i < CHATS * 3; i++) {
    void outbox.enqueue({
      chatId: (i % CHATS) - (i % 3 === 0 ? 2_000 : 0),
      execute: () => gate.promise,
    });
  }
  await clock.flush();
  return reader;
}

const bench = new Bench({ time: 1_000 });
bench
  .add(`outbox, ${OPS} ops to ${CHATS} chats, no metrics`, () => deliverAll(false))
  .add(`outbox, ${OPS} ops to ${CHATS} chats, instrumented`, () => deliverAll(true));
const byKind = await waitingChats(0);
const perChat = await waitingChats(100);
bench
  .add(`collect, ${CHATS} chats waiting, by chat kind`, () => byKind.collect())
  .add(`collect, ${CHATS} chats waiting, 100 chats one by one`, () => perChat.collect());
await bench.run();
console.table(bench.table());
