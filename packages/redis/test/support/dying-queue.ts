// A queue as a crashed process leaves it: after `die()` every call of this handle fails and never
// reaches Redis, so its leases are neither renewed nor released.

import type { RedisUpdateQueue } from "../../src/index.js";

export function dyingQueue(queue: RedisUpdateQueue): { queue: RedisUpdateQueue; die(): void } {
  let dead = false;
  const proxy = new Proxy(queue, {
    get(target, property, receiver) {
      const value = Reflect.get(target, property, receiver);
      if (typeof value !== "function") return value;
      return (...args: unknown[]) =>
        dead ? Promise.reject(new Error("process is dead")) : value.apply(target, args);
    },
  });
  return {
    queue: proxy,
    die() {
      dead = true;
    },
  };
}
