// The messenger's writes are keyed with the outbox's own key builders: deleting a progress
// message drops the edit of it still waiting, whatever method planned that edit.

import { start } from "@telepace/bot-api-sim";
import { TelegramClient } from "@telepace/client";
import pino from "pino";
import { describe, expect, it } from "vitest";
import { Messenger } from "../src/messenger.js";
import { E2E_TIMEOUT_MS, eventually } from "./harness.js";

describe("Messenger.deleteProgress", { timeout: E2E_TIMEOUT_MS }, () => {
  it("drops the progress message's pending edit, which is never sent", async () => {
    await using sim = await start();
    // The first edit stays in flight long enough for the second to wait behind it.
    sim.faults.setLatency(300, { methods: ["editMessageText"] });
    await using client = new TelegramClient({ token: sim.token, apiRoot: sim.apiRoot });
    const messenger = new Messenger(client, pino({ level: "silent" }));
    const user = sim.users.create();
    const group = sim.chats.createSupergroup({ members: [user] });
    const progress = await messenger.sendText(group.id, "working…");
    const id = progress?.message_id ?? -1;

    const first = messenger.editText(group.id, id, "1/3");
    await eventually("the first edit is in flight", () => client.outbox.snapshot().inFlight === 1);
    const second = messenger.editText(group.id, id, "2/3");
    await messenger.deleteProgress(group.id, id);

    expect(await second).toBe("dropped");
    expect(await first).toBe("sent");
    const events = sim.transcript(group).events.filter((event) => event.actor === "bot");
    expect(events.map((event) => event.kind)).toEqual(["send", "edit", "delete"]);
    expect(events.find((event) => event.kind === "edit")?.text).toBe("1/3");
  });
});
