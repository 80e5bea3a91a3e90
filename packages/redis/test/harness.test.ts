import { Socket } from "node:net";
import { describeWithRedis, startRedis } from "@telepace/testing";
import { expect, it } from "vitest";

function connects(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = new Socket();
    socket.once("error", () => resolve(false));
    socket.connect(port, "127.0.0.1", () => {
      socket.destroy();
      resolve(true);
    });
  });
}

describeWithRedis("the redis-server harness", (server) => {
  it("starts a server on loopback that answers, and stops it", async () => {
    expect(server().url).toBe(`redis://127.0.0.1:${server().port}`);
    expect(await connects(server().port)).toBe(true);
    const other = await startRedis();
    expect(other.port).not.toBe(server().port);
    await other.stop();
    expect(await connects(other.port)).toBe(false);
  });
});
