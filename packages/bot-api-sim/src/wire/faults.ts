// Injected faults: fail, reset or garble the next N calls of a method (before or after the call
// took effect), a random error rate, and added latency. Method names are matched in any case;
// "*" matches every method and "download" matches file downloads.

import {
  checkBoolean,
  checkNumber,
  checkOptionalNumber,
  checkOptions,
  describeValue,
} from "@telepace/core";
import { BotApiSimError } from "../errors.js";
import { defaultDescription } from "./api-failure.js";

/** Options of {@link FaultInjector.failNext}. */
export interface FailOptions {
  /** HTTP status and `error_code`. Integer 400–599. @defaultValue 500 */
  readonly code?: number;
  /** The envelope's description. @defaultValue the status's standard text (429: "Too Many Requests: retry after N") */
  readonly description?: string;
  /** For 429: `parameters.retry_after` in seconds. Range > 0. @defaultValue 1 */
  readonly retryAfter?: number;
  /** Let the call take effect, then answer with the error (the message was sent after all). @defaultValue false */
  readonly afterProcessing?: boolean;
}

/** Options of {@link FaultInjector.resetNext} and {@link FaultInjector.malformNext}. */
export interface DisruptOptions {
  /**
   * Let the call take effect first, then break the answer. For downloads a reset after
   * processing cuts the body half-way. @defaultValue false
   */
  readonly afterProcessing?: boolean;
}

/** Options of {@link FaultInjector.setLatency}. */
export interface LatencyOptions {
  /** Extra random delay up to this many ms on top. Range >= 0. @defaultValue 0 */
  readonly jitterMs?: number;
  /** Only these methods are delayed. @defaultValue every method */
  readonly methods?: readonly string[];
}

/** Options of {@link FaultInjector.setErrorRate}. */
export interface ErrorRateOptions {
  /** Status of the random errors. Integer 500–599. @defaultValue 500 */
  readonly code?: number;
  /** Only these methods fail at random. @defaultValue every method */
  readonly methods?: readonly string[];
}

function afterProcessing(options: DisruptOptions | undefined): boolean {
  const given = checkOptions("options", options, ["afterProcessing"]) as DisruptOptions;
  return checkBoolean("afterProcessing", given.afterProcessing, false);
}

/** A fault decided for one call. */
export type PlannedFault =
  | {
      readonly kind: "fail";
      readonly code: number;
      readonly description: string;
      readonly retryAfter: number | undefined;
      readonly afterProcessing: boolean;
      readonly random: boolean;
    }
  | { readonly kind: "reset"; readonly afterProcessing: boolean }
  | { readonly kind: "malformed"; readonly afterProcessing: boolean };

/** One queued fault as {@link FaultInjector.armed} lists it. */
export interface ArmedFault {
  /** The method key it matches (lower case; `"*"` every method, `"download"` the file route). */
  readonly method: string;
  readonly kind: "fail" | "reset" | "malformed";
  /** Calls it still covers. */
  readonly remaining: number;
  /** The status of a `fail`. */
  readonly code: number | undefined;
  readonly afterProcessing: boolean;
}

/** Everything armed in a {@link FaultInjector}. */
export interface ArmedFaults {
  /** Queued faults, per method in the order they fire. */
  readonly queued: readonly ArmedFault[];
  /** The latency in force, or `undefined`. */
  readonly latency:
    | {
        readonly ms: number;
        readonly jitterMs: number;
        readonly methods: readonly string[] | undefined;
      }
    | undefined;
  /** The random error rate in force, or `undefined`. */
  readonly errorRate:
    | {
        readonly rate: number;
        readonly code: number;
        readonly methods: readonly string[] | undefined;
      }
    | undefined;
}

interface QueuedFault {
  readonly fault: PlannedFault;
  remaining: number;
}

/** Queued fault entries kept at most (each may cover many calls). */
const MAX_QUEUED_ENTRIES = 10_000;

function methodKey(name: string): string {
  if (typeof name !== "string" || name.length === 0) {
    throw new TypeError(`Expected \`method\` to be a non-empty string, got ${String(name)}`);
  }
  return name.toLowerCase();
}

/** Whether a method filter covers `key`: no filter, the name itself, or `"*"` (every method). */
function covers(methods: ReadonlySet<string> | undefined, key: string): boolean {
  return methods === undefined || methods.has(key) || (methods.has("*") && key !== "download");
}

function methodSet(methods: readonly string[] | undefined): ReadonlySet<string> | undefined {
  if (methods === undefined) return undefined;
  if (!Array.isArray(methods)) {
    throw new TypeError(
      `Expected \`methods\` to be an array of method names, got ${describeValue(methods)}`,
    );
  }
  return new Set(methods.map(methodKey));
}

/** The fault plan of one simulator. */
export class FaultInjector {
  readonly #queues = new Map<string, QueuedFault[]>();
  #entries = 0;
  #latency: { ms: number; jitterMs: number; methods: ReadonlySet<string> | undefined } | undefined;
  #errorRate: { rate: number; code: number; methods: ReadonlySet<string> | undefined } | undefined;
  readonly #random: () => number;

  constructor(random: () => number) {
    this.#random = random;
  }

  /** Answers the next `count` calls of `method` with an error envelope. */
  failNext(method: string, count = 1, options?: FailOptions): void {
    const given = checkOptions("options", options, [
      "code",
      "description",
      "retryAfter",
      "afterProcessing",
    ]) as FailOptions;
    const code = checkOptionalNumber("code", given.code, 500, {
      integer: true,
      min: 400,
      max: 599,
    });
    const retryAfter =
      code === 429
        ? checkOptionalNumber("retryAfter", given.retryAfter, 1, { greaterThan: 0 })
        : undefined;
    if (given.description !== undefined && typeof given.description !== "string") {
      throw new TypeError(
        `Expected \`description\` to be a string, got ${describeValue(given.description)}`,
      );
    }
    const description =
      given.description ??
      (code === 429 ? `Too Many Requests: retry after ${retryAfter}` : defaultDescription(code));
    this.#enqueue(method, count, {
      kind: "fail",
      code,
      description,
      retryAfter,
      afterProcessing: checkBoolean("afterProcessing", given.afterProcessing, false),
      random: false,
    });
  }

  /** Resets the connection of the next `count` calls of `method`. */
  resetNext(method: string, count = 1, options?: DisruptOptions): void {
    this.#enqueue(method, count, { kind: "reset", afterProcessing: afterProcessing(options) });
  }

  /** Answers the next `count` calls of `method` with a body that is not valid JSON. */
  malformNext(method: string, count = 1, options?: DisruptOptions): void {
    this.#enqueue(method, count, { kind: "malformed", afterProcessing: afterProcessing(options) });
  }

  /** Delays every (matching) call by `ms` of the simulator clock; 0 turns latency off. */
  setLatency(ms: number, options?: LatencyOptions): void {
    const given = checkOptions("options", options, ["jitterMs", "methods"]) as LatencyOptions;
    checkNumber("ms", ms, { min: 0 });
    const jitterMs = checkOptionalNumber("jitterMs", given.jitterMs, 0, { min: 0 });
    this.#latency =
      ms === 0 && jitterMs === 0 ? undefined : { ms, jitterMs, methods: methodSet(given.methods) };
  }

  /** Fails this fraction of (matching) calls with a 5xx; 0 turns it off. */
  setErrorRate(rate: number, options?: ErrorRateOptions): void {
    const given = checkOptions("options", options, ["code", "methods"]) as ErrorRateOptions;
    checkNumber("rate", rate, { min: 0, max: 1 });
    const code = checkOptionalNumber("code", given.code, 500, {
      integer: true,
      min: 500,
      max: 599,
    });
    this.#errorRate = rate === 0 ? undefined : { rate, code, methods: methodSet(given.methods) };
  }

  /** Removes every queued fault, the error rate and the latency. */
  clear(): void {
    this.#queues.clear();
    this.#entries = 0;
    this.#latency = undefined;
    this.#errorRate = undefined;
  }

  /** Calls still covered by queued faults, per method key. */
  pending(): Record<string, number> {
    const result: Record<string, number> = {};
    for (const [key, queue] of this.#queues) {
      result[key] = queue.reduce((sum, entry) => sum + entry.remaining, 0);
    }
    return result;
  }

  /** What is armed now: queued faults, latency and error rate; a fresh frozen object. */
  armed(): ArmedFaults {
    const queued: ArmedFault[] = [];
    for (const [method, queue] of this.#queues) {
      for (const { fault, remaining } of queue) {
        queued.push(
          Object.freeze({
            method,
            kind: fault.kind,
            remaining,
            code: fault.kind === "fail" ? fault.code : undefined,
            afterProcessing: fault.afterProcessing,
          }),
        );
      }
    }
    const methods = (set: ReadonlySet<string> | undefined) =>
      set === undefined ? undefined : Object.freeze([...set]);
    const latency = this.#latency;
    const errorRate = this.#errorRate;
    return Object.freeze({
      queued: Object.freeze(queued),
      latency:
        latency === undefined
          ? undefined
          : Object.freeze({
              ms: latency.ms,
              jitterMs: latency.jitterMs,
              methods: methods(latency.methods),
            }),
      errorRate:
        errorRate === undefined
          ? undefined
          : Object.freeze({
              rate: errorRate.rate,
              code: errorRate.code,
              methods: methods(errorRate.methods),
            }),
    });
  }

  /** The latency for one call of `method`, in ms. @internal */
  latencyFor(method: string): number {
    const latency = this.#latency;
    if (latency === undefined) return 0;
    if (!covers(latency.methods, method.toLowerCase())) return 0;
    return latency.ms + (latency.jitterMs > 0 ? this.#random() * latency.jitterMs : 0);
  }

  /** Takes the fault, if any, for one call of `method`. @internal */
  take(method: string): PlannedFault | undefined {
    const key = method.toLowerCase();
    const queued = this.#dequeue(key) ?? (key === "download" ? undefined : this.#dequeue("*"));
    if (queued !== undefined) return queued;
    const errorRate = this.#errorRate;
    if (
      errorRate !== undefined &&
      key !== "download" &&
      covers(errorRate.methods, key) &&
      this.#random() < errorRate.rate
    ) {
      return {
        kind: "fail",
        code: errorRate.code,
        description: defaultDescription(errorRate.code),
        retryAfter: undefined,
        afterProcessing: false,
        random: true,
      };
    }
    return undefined;
  }

  #enqueue(method: string, count: number, fault: PlannedFault): void {
    const key = methodKey(method);
    checkNumber("count", count, { integer: true, min: 1 });
    if (this.#entries >= MAX_QUEUED_ENTRIES) {
      throw new BotApiSimError(
        "ERR_CAPACITY",
        `${MAX_QUEUED_ENTRIES} fault entries are queued already; clear() them or use a count`,
      );
    }
    let queue = this.#queues.get(key);
    if (queue === undefined) {
      queue = [];
      this.#queues.set(key, queue);
    }
    queue.push({ fault, remaining: count });
    this.#entries++;
  }

  #dequeue(key: string): PlannedFault | undefined {
    const queue = this.#queues.get(key);
    const head = queue?.[0];
    if (queue === undefined || head === undefined) return undefined;
    head.remaining--;
    if (head.remaining === 0) {
      queue.shift();
      this.#entries--;
      if (queue.length === 0) this.#queues.delete(key);
    }
    return head.fault;
  }
}
