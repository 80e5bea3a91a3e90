// The bot's metrics for Prometheus: `@telepace/metrics` records the outbox, the intake (and its
// dispatcher) or the shared worker, and the media registry on an OpenTelemetry meter, and a loopback HTTP server
// answers each GET /metrics with a collection in Prometheus's text format.

import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { PrometheusExporter } from "@opentelemetry/exporter-prometheus";
import { MeterProvider } from "@opentelemetry/sdk-metrics";
import {
  instrumentTelepace,
  type MediaRegistrySource,
  type OutboxSource,
  type SharedQueueSource,
  type SharedWorkerSource,
  type TelepaceInstrumentation,
  type UpdateIntakeSource,
} from "@telepace/metrics";

/** The path Prometheus scrapes. */
export const METRICS_PATH = "/metrics";
/** Only this machine may scrape: put a proxy (or an agent) in front to publish the figures. */
const LOOPBACK = "127.0.0.1";

/** What the endpoint reports on. */
export interface MetricsSources {
  readonly outbox: OutboxSource;
  readonly intake?: UpdateIntakeSource | undefined;
  readonly mediaRegistry?: MediaRegistrySource | undefined;
  /** With `--redis`: this process's worker of the shared update queue. */
  readonly sharedWorker?: SharedWorkerSource | undefined;
  /** With `--redis`: the shared update queue (its backlog, the same from every process). */
  readonly sharedQueue?: SharedQueueSource | undefined;
}

/** The metrics endpoint could not start (the port is taken, say): one line, as at startup. */
export class MetricsEndpointError extends Error {
  override readonly name = "MetricsEndpointError";
}

/** A running `/metrics` endpoint on loopback. */
export class MetricsEndpoint {
  /** Where to scrape, e.g. `http://127.0.0.1:9464/metrics`. */
  readonly url: string;
  readonly #server: Server;
  readonly #provider: MeterProvider;
  readonly #instrumentation: TelepaceInstrumentation;
  #closing: Promise<void> | undefined;

  private constructor(
    server: Server,
    provider: MeterProvider,
    instrumentation: TelepaceInstrumentation,
  ) {
    this.#server = server;
    this.#provider = provider;
    this.#instrumentation = instrumentation;
    this.url = `http://${LOOPBACK}:${(server.address() as AddressInfo).port}${METRICS_PATH}`;
  }

  /**
   * Instruments `sources` and listens on `127.0.0.1:port` (0: a free port, see `url`).
   * @throws {MetricsEndpointError} when the port cannot be listened on.
   */
  static async start(port: number, sources: MetricsSources): Promise<MetricsEndpoint> {
    // The exporter collects on each request; its own server is not started (ours picks the host
    // and tells the port it got).
    const exporter = new PrometheusExporter({ preventServerStart: true });
    const provider = new MeterProvider({ readers: [exporter] });
    const instrumentation = instrumentTelepace({
      meter: provider.getMeter("@telepace/reference-bot"),
      ...sources,
    });
    const server = createServer((request, response) => {
      const path = new URL(request.url ?? "/", "http://localhost").pathname;
      if (request.method !== "GET" || path !== METRICS_PATH) {
        response.writeHead(404, { "content-type": "text/plain" }).end(`Scrape ${METRICS_PATH}\n`);
        return;
      }
      exporter.getMetricsRequestHandler(request, response);
    });
    try {
      await new Promise<void>((resolve, reject) => {
        server.once("error", reject);
        server.listen(port, LOOPBACK, () => {
          server.off("error", reject);
          resolve();
        });
      });
    } catch (error) {
      instrumentation.stop();
      await provider.shutdown().catch(() => {});
      const code = (error as { code?: unknown }).code;
      throw new MetricsEndpointError(
        `Cannot serve metrics on ${LOOPBACK}:${port} (${typeof code === "string" ? code : String(error)})`,
      );
    }
    return new MetricsEndpoint(server, provider, instrumentation);
  }

  /** Stops recording and closes the server (open scrapes are cut). Idempotent. */
  close(): Promise<void> {
    this.#closing ??= (async () => {
      this.#instrumentation.stop();
      await new Promise<void>((resolve) => {
        this.#server.close(() => resolve());
        this.#server.closeAllConnections();
      });
      await this.#provider.shutdown().catch(() => {});
    })();
    return this.#closing;
  }
}
