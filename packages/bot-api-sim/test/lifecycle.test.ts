// Shutdown: close() answers parked long polls, ends waits, cuts what is still busy after its
// deadline, refuses further control calls, and is idempotent; `await using` closes too.

import { ManualClock } from "@telepace/core";
import { eventually } from "@telepace/testing";
import { describe, expect, it } from "vitest";
import { start } from "../src/index.js";
import { call } from "./helpers.js";

describe("close", () => {
  it("answers a parked long poll and refuses new connections", async () => {
    const sim = await start();
    const poll = call(sim, "getUpdates", { timeout: 50 });
    await eventually("the bot is polling", () => sim.snapshot().bots[0]?.isPolling === true);
    await sim.close();
    expect((await poll).body).toEqual({ ok: true, result: [] });
    expect(sim.snapshot().isClosed).toBe(true);
    await expect(call(sim, "getMe")).rejects.toThrow();
  });

  it("is idempotent and makes the control API throw ERR_SIM_CLOSED", async () => {
    const sim = await start();
    const first = sim.close();
    expect(sim.close()).toBe(first);
    await first;
    expect(() => sim.users.create()).toThrow(expect.objectContaining({ code: "ERR_SIM_CLOSED" }));
    expect(() => sim.chats.createGroup({ members: [] })).toThrow(
      expect.objectContaining({ code: "ERR_SIM_CLOSED" }),
    );
  });

  it("cuts requests still busy after the deadline", async () => {
    const clock = new ManualClock();
    const sim = await start({ clock });
    sim.faults.setLatency(60_000);
    const stuck = expect(call(sim, "getMe")).rejects.toThrow();
    await eventually("one timer is pending", () => clock.pendingTimers === 1);
    await sim.close({ timeoutMs: 50 });
    await stuck;
    expect(clock.pendingTimers).toBe(0);
  });

  it("closes with await using", async () => {
    let apiRoot = "";
    {
      await using sim = await start();
      apiRoot = sim.apiRoot;
      expect((await call(sim, "getMe")).status).toBe(200);
    }
    await expect(fetch(`${apiRoot}/`)).rejects.toThrow();
  });
});
