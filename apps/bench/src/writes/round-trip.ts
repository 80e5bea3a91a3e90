// The round trip the writes runs have: one sendMessage at a time to a fresh time-scaled sim, on a
// warm connection, nothing else running, in Telegram ms.

import { start } from "@telepace/bot-api-sim";
import { Pool } from "undici";
import { percentile } from "../stats.js";

/** A measured round trip. */
export interface RoundTrip {
  readonly scale: number;
  readonly samples: number;
  /** Median of the samples, Telegram ms (real ms × scale). */
  readonly medianMs: number;
  readonly p90Ms: number;
}

/**
 * Sends `samples` messages one after another, each to a chat of its own (inside the sim's global
 * burst, so none waits for a limit), after one warm-up request that opens the connection.
 */
export async function measureRoundTrip(scale: number, samples = 20): Promise<RoundTrip> {
  if (!Number.isInteger(samples) || samples < 1 || samples > 29) {
    throw new RangeError(`Expected \`samples\` to be an integer 1..29, got ${String(samples)}`);
  }
  const sim = await start({ timeScale: scale });
  const pool = new Pool(new URL(sim.apiRoot).origin, { connections: 1 });
  try {
    const path = `${new URL(sim.apiRoot).pathname.replace(/\/$/, "")}/bot${sim.token}/sendMessage`;
    const send = async (chatId: number): Promise<void> => {
      const { statusCode, body } = await pool.request({
        method: "POST",
        path,
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ chat_id: chatId, text: "round trip" }),
      });
      await body.text();
      if (statusCode !== 200) throw new Error(`round-trip probe: the sim answered ${statusCode}`);
    };
    const chat = () => sim.chats.createPrivate(sim.users.create({ firstName: "Probe" })).id;
    await send(chat());
    const times: number[] = [];
    for (let i = 0; i < samples; i++) {
      const id = chat();
      const startedAt = performance.now();
      await send(id);
      times.push((performance.now() - startedAt) * scale);
    }
    times.sort((a, b) => a - b);
    return { scale, samples, medianMs: percentile(times, 50), p90Ms: percentile(times, 90) };
  } finally {
    await pool.close();
    await sim.close({ timeoutMs: 500 });
  }
}
