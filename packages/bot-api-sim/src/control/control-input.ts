// The fields of one control request: the query string merged with a JSON object body, checked
// against the fields its route takes (an unknown one names the closest), read with typed
// accessors that name the field in their TypeError.

import type { IncomingMessage } from "node:http";
import { checkOptions } from "@telepace/core";
import { readBody } from "../wire/request-body.js";
import type { BotRef, ChatRef } from "../world/sim-world.js";

/** Largest control request body (documents travel base64-encoded). */
const MAX_CONTROL_BODY_BYTES = 96 * 1024 * 1024;

/** The fields of one control request, from the query string and a JSON object body. */
export class ControlInput {
  readonly #values: Readonly<Record<string, unknown>>;
  readonly #fields: readonly string[];

  /** Throws a TypeError naming the first field outside `fields` (and the closest valid one). */
  constructor(values: Record<string, unknown>, fields: readonly string[]) {
    this.#values = checkOptions("request", values, fields);
    this.#fields = fields;
  }

  #get(name: string): unknown {
    // A route that reads a field it does not declare is a bug of the simulator, not of the caller.
    if (!this.#fields.includes(name)) throw new Error(`Control route reads undeclared ${name}`);
    return this.#values[name];
  }

  string(name: string): string | undefined {
    const value = this.#get(name);
    if (value === undefined || value === null) return undefined;
    if (typeof value !== "string") {
      throw new TypeError(`Expected \`${name}\` to be a string, got ${JSON.stringify(value)}`);
    }
    return value;
  }

  requiredString(name: string): string {
    const value = this.string(name);
    if (value === undefined)
      throw new TypeError(`Expected \`${name}\` to be a string, got undefined`);
    return value;
  }

  number(name: string): number | undefined {
    const value = this.#get(name);
    if (value === undefined || value === null) return undefined;
    const number = typeof value === "string" && value.trim() !== "" ? Number(value) : value;
    if (typeof number !== "number" || !Number.isFinite(number)) {
      throw new TypeError(`Expected \`${name}\` to be a number, got ${JSON.stringify(value)}`);
    }
    return number;
  }

  /** A number, or `false` (JSON false or the string "false") for a limit that is off. */
  numberOrFalse(name: string): number | false | undefined {
    const value = this.#get(name);
    return value === false || value === "false" ? false : this.number(name);
  }

  int(name: string): number | undefined {
    const value = this.number(name);
    if (value !== undefined && !Number.isSafeInteger(value)) {
      throw new TypeError(`Expected \`${name}\` to be an integer, got ${value}`);
    }
    return value;
  }

  requiredInt(name: string): number {
    const value = this.int(name);
    if (value === undefined)
      throw new TypeError(`Expected \`${name}\` to be an integer, got undefined`);
    return value;
  }

  bool(name: string): boolean | undefined {
    const value = this.#get(name);
    if (value === undefined || value === null) return undefined;
    if (value === true || value === "true" || value === "1") return true;
    if (value === false || value === "false" || value === "0") return false;
    throw new TypeError(`Expected \`${name}\` to be a boolean, got ${JSON.stringify(value)}`);
  }

  intArray(name: string): number[] | undefined {
    const value = this.#get(name);
    if (value === undefined || value === null) return undefined;
    const items = typeof value === "string" ? value.split(",") : value;
    if (!Array.isArray(items))
      throw new TypeError(`Expected \`${name}\` to be an array of integers`);
    return items.map((item: unknown, index) => {
      const number = typeof item === "string" && item.trim() !== "" ? Number(item) : item;
      if (typeof number !== "number" || !Number.isSafeInteger(number)) {
        throw new TypeError(
          `Expected \`${name}[${index}]\` to be an integer, got ${JSON.stringify(item)}`,
        );
      }
      return number;
    });
  }

  stringArray(name: string): string[] | undefined {
    const value = this.#get(name);
    if (value === undefined || value === null) return undefined;
    const items = typeof value === "string" ? value.split(",") : value;
    if (!Array.isArray(items) || items.some((item) => typeof item !== "string")) {
      throw new TypeError(`Expected \`${name}\` to be an array of strings`);
    }
    return items as string[];
  }

  /** `bot_id` as a bot reference. */
  bot(): BotRef | undefined {
    return this.int("bot_id");
  }

  /** `chat_id` as a chat reference. */
  chat(): ChatRef {
    return this.requiredInt("chat_id");
  }

  /** Fields that are set, for the options objects of the programmatic API. */
  optional<T extends Record<string, unknown>>(
    fields: T,
  ): { [K in keyof T]: Exclude<T[K], undefined> } {
    return Object.fromEntries(
      Object.entries(fields).filter(([, value]) => value !== undefined),
    ) as never;
  }
}

/** Reads a control request's fields. */
export async function readInput(
  req: IncomingMessage,
  query: string,
  fields: readonly string[],
): Promise<ControlInput> {
  const values: Record<string, unknown> = Object.fromEntries(new URLSearchParams(query));
  if (req.method === "POST") {
    const body = await readBody(req, MAX_CONTROL_BODY_BYTES);
    const text = body.toString("utf8").trim();
    if (text.length > 0) {
      let parsed: unknown;
      try {
        parsed = JSON.parse(text);
      } catch {
        throw new TypeError("Expected the control request body to be a JSON object");
      }
      if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) {
        throw new TypeError("Expected the control request body to be a JSON object");
      }
      Object.assign(values, parsed);
    }
  } else {
    req.resume();
  }
  return new ControlInput(values, fields);
}
