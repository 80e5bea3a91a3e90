// Serves telepace's metrics for Prometheus to scrape, then scrapes itself once and prints what a
// scrape returns. Run: pnpm --filter @telepace/metrics example:prometheus

// README:usage-start
import { PrometheusExporter } from "@opentelemetry/exporter-prometheus";
import { MeterProvider } from "@opentelemetry/sdk-metrics";
import { MediaSchedulerRegistry } from "@telepace/media-scheduler";
import { instrumentTelepace } from "@telepace/metrics";
import { TelegramOutbox } from "@telepace/outbox";
import { UpdateIntake } from "@telepace/update-dispatch";

const port = Number(process.env.METRICS_PORT ?? 9464);
// The exporter is the SDK's MetricReader: it collects on each scrape of /metrics.
const exporter = new PrometheusExporter({ port, preventServerStart: true });
await exporter.startServer();
const meterProvider = new MeterProvider({ readers: [exporter] });

// Your components; with @telepace/client, pass `client.outbox`.
const outbox = new TelegramOutbox();
const intake = new UpdateIntake(async () => {}); // a webhook intake: updates come via accept()
const mediaRegistry = new MediaSchedulerRegistry();

const metrics = instrumentTelepace({
  meter: meterProvider.getMeter("telepace"),
  outbox,
  intake,
  mediaRegistry,
  maxPerChatSeries: 20,
});
// README:usage-end

// Some traffic: a send that earns a 429 (retry_after 1 s) and is then delivered, a webhook
// update, and a download permit.
let calls = 0;
await outbox.enqueue({
  chatId: 42,
  execute: async () => {
    // A 429 as grammY's GrammyError carries it; the outbox freezes the chat and retries.
    if (++calls === 1) throw { error_code: 429, parameters: { retry_after: 1 } };
    return { message_id: 1 };
  },
});
const ada = { id: 42, is_bot: false, first_name: "Ada" };
await intake.accept({
  update_id: 1,
  message: { message_id: 1, date: 0, chat: { ...ada, type: "private" }, from: ada, text: "hi" },
});
const transfer = mediaRegistry.open({ dc: "api.telegram.org", direction: "download" });
const permit = await transfer.acquire(512 * 1024);

const scrape = await fetch(`http://localhost:${port}/metrics`);
const lines = (await scrape.text()).split("\n");
// Buckets left out to keep it short.
console.log(lines.filter((line) => /^telepace_[^{]*(?<!_bucket)\{/.test(line)).join("\n"));

metrics.stop(); // unsubscribes every channel and observable callback
permit.release();
transfer.close();
await Promise.all([outbox.close(), intake.close(), mediaRegistry.close()]);
await meterProvider.shutdown();
