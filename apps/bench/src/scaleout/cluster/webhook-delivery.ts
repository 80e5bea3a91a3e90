// Telegram's side of a webhook deployment for the peer: takes the sim's updates as they come (long
// polling, the bench's own connection) and hands each to the peer process that owns its chat, as
// a load balancer routing by chat in front of several webhook processes would. It costs the peer
// nothing: no Redis, no lease, no queue; telepace's runs pay for their elected poller and shared
// queue instead.

import type { Update } from "@grammyjs/types";

export class WebhookDelivery {
  /** Updates handed to a process so far. */
  delivered = 0;
  readonly #controller = new AbortController();
  readonly #loop: Promise<void>;

  constructor(apiRoot: string, token: string, deliver: (update: Update) => void) {
    this.#loop = this.#run(`${apiRoot}/bot${token}/getUpdates`, deliver);
  }

  async #run(url: string, deliver: (update: Update) => void): Promise<void> {
    let offset = 0;
    const { signal } = this.#controller;
    while (!signal.aborted) {
      let updates: Update[];
      try {
        const response = await fetch(`${url}?offset=${offset}&timeout=1&limit=100`, { signal });
        const body = (await response.json()) as { ok: boolean; result?: Update[] };
        if (!body.ok)
          throw new Error(`scaleout: the webhook's getUpdates answered ${response.status}`);
        updates = body.result ?? [];
      } catch (error) {
        if (signal.aborted) return;
        throw error;
      }
      for (const update of updates) {
        deliver(update);
        this.delivered++;
        offset = update.update_id + 1;
      }
    }
  }

  /** Stops taking updates; rejects when the loop had failed. */
  async stop(): Promise<void> {
    this.#controller.abort();
    await this.#loop;
  }
}
