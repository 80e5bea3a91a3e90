// A real OpenTelemetry SDK pipeline in memory: a MeterProvider whose reader collects on demand,
// and lookups of one metric's data points by name and attributes.

import type { Attributes } from "@opentelemetry/api";
import {
  type DataPoint,
  DataPointType,
  type Histogram,
  MeterProvider,
  type MetricData,
  MetricReader,
  type ResourceMetrics,
} from "@opentelemetry/sdk-metrics";

/** Collects only when a test asks. */
class OnDemandReader extends MetricReader {
  protected override onShutdown(): Promise<void> {
    return Promise.resolve();
  }
  protected override onForceFlush(): Promise<void> {
    return Promise.resolve();
  }
}

/** One collection: every metric by name. */
export class Collected {
  readonly resource: ResourceMetrics;
  readonly metrics: ReadonlyMap<string, MetricData>;

  constructor(resource: ResourceMetrics) {
    this.resource = resource;
    const metrics = new Map<string, MetricData>();
    for (const scope of resource.scopeMetrics) {
      for (const metric of scope.metrics) metrics.set(metric.descriptor.name, metric);
    }
    this.metrics = metrics;
  }

  /** The metric's data points (none when it recorded nothing). */
  points(name: string): readonly DataPoint<unknown>[] {
    return (this.metrics.get(name)?.dataPoints ?? []) as readonly DataPoint<unknown>[];
  }

  /** The value of the gauge or sum point whose attributes equal `attributes`. */
  value(name: string, attributes: Attributes = {}): number | undefined {
    const metric = this.metrics.get(name);
    if (metric === undefined) return undefined;
    if (metric.dataPointType === DataPointType.HISTOGRAM) {
      throw new TypeError(`${name} is a histogram: use histogram()`);
    }
    return find(metric.dataPoints as DataPoint<number>[], attributes)?.value;
  }

  /** The histogram point whose attributes equal `attributes`. */
  histogram(name: string, attributes: Attributes = {}): Histogram | undefined {
    const metric = this.metrics.get(name);
    if (metric === undefined) return undefined;
    if (metric.dataPointType !== DataPointType.HISTOGRAM) {
      throw new TypeError(`${name} is not a histogram`);
    }
    return find(metric.dataPoints, attributes)?.value;
  }

  /** Every attribute value of every point of every metric. */
  attributeValues(): string[] {
    const values: string[] = [];
    for (const metric of this.metrics.values()) {
      for (const point of metric.dataPoints as DataPoint<unknown>[]) {
        for (const value of Object.values(point.attributes)) values.push(String(value));
      }
    }
    return values;
  }
}

function find<T>(
  points: readonly DataPoint<T>[],
  attributes: Attributes,
): DataPoint<T> | undefined {
  const wanted = JSON.stringify(Object.entries(attributes).sort());
  return points.find((point) => JSON.stringify(Object.entries(point.attributes).sort()) === wanted);
}

/** A meter on a fresh provider, and `collect()` to read what it recorded. */
export function meterHarness() {
  const reader = new OnDemandReader();
  const provider = new MeterProvider({ readers: [reader] });
  const meter = provider.getMeter("telepace-test");
  return {
    meter,
    async collect(): Promise<Collected> {
      const { resourceMetrics, errors } = await reader.collect();
      if (errors.length > 0) throw errors[0];
      return new Collected(resourceMetrics);
    },
    reader,
    provider,
  };
}
