// Serves telepace's metrics for Prometheus on http://localhost:9464/metrics (METRICS_PORT for
// another port) until Ctrl-C, with an outbox, a webhook intake and a media registry to measure.
// Run: npx tsx prometheus.ts, then: curl -s localhost:9464/metrics | grep ^telepace_
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { PrometheusExporter } from "@opentelemetry/exporter-prometheus";
import { MeterProvider } from "@opentelemetry/sdk-metrics";
import { MediaSchedulerRegistry } from "@telepace/media-scheduler";
import { instrumentTelepace } from "@telepace/metrics";
import { TelegramOutbox } from "@telepace/outbox";
import { UpdateIntake } from "@telepace/update-dispatch";

// The exporter is the SDK's MetricReader: it collects on each scrape of /metrics. Its own server
// does not keep a process alive (it is unref'd), so a server of ours serves its handler.
const exporter = new PrometheusExporter({ preventServerStart: true });
const meterProvider = new MeterProvider({ readers: [exporter] });
const server = createServer((request, response) => {
  if (request.url === "/metrics") exporter.getMetricsRequestHandler(request, response);
  else response.writeHead(404).end();
});
await new Promise<void>((resolve) =>
  server.listen(Number(process.env.METRICS_PORT ?? 9464), resolve),
);
const { port } = server.address() as AddressInfo; // METRICS_PORT=0 takes any free port

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
console.log(`Serving http://localhost:${port}/metrics; Ctrl-C stops it.`);

// Something to measure (your bot's traffic takes its place): a send that earns a 429 before it is
// delivered, a webhook update, and a download holding 512 KiB of its budget.
let calls = 0;
void outbox.enqueue({
  chatId: 42,
  execute: async () => {
    // A 429 as grammY's GrammyError carries it; the outbox freezes the chat for 1 s and retries.
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

async function stop(): Promise<void> {
  metrics.stop(); // unsubscribes every channel and observable callback
  permit.release();
  transfer.close();
  await Promise.all([outbox.close(), intake.close(), mediaRegistry.close()]);
  await meterProvider.shutdown();
  server.close();
}
process.once("SIGINT", () => void stop());
process.once("SIGTERM", () => void stop());
