import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import type { ServerResponse } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BrainClient } from "../../src/client/client.js";
import { BRAIN_BIN } from "../helpers/cli.js";
import { brainUrlFromLog, type StartedProcess, startProcess } from "../helpers/processes.js";
import { startToolService, type ToolService } from "../helpers/tool-service.js";
import { runTurn } from "../helpers/turns.js";

const HUNDRED_MB = 100 * 1024 * 1024;
const written = new Map<string, number>();
let service: ToolService;
let brain: StartedProcess & { ready: string };
let client: BrainClient;

/** Stream `total` bytes as fast as the socket takes them, counting what was written before Brain hung up. */
async function stream(res: ServerResponse, path: string, head: string, total: number): Promise<void> {
  const chunk = Buffer.alloc(64 * 1024, "a");
  let sent = 0;
  res.write(head);
  while (sent < total && !res.destroyed) {
    sent += chunk.length;
    written.set(path, sent);
    if (!res.write(chunk)) {
      await new Promise<void>((resolve) => {
        res.once("drain", resolve);
        res.once("close", resolve);
      });
    }
  }
  res.end();
}

function rssKiB(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  return Number(/VmRSS:\s+(\d+)/.exec(status)?.[1]);
}

beforeAll(async () => {
  service = await startToolService({
    "/huge-json": (_, res) => {
      res.writeHead(200, { "content-type": "application/json" });
      return stream(res, "/huge-json", '{"content":[{"type":"text","text":"', HUNDRED_MB);
    },
    "/huge-sse": (_, res) => {
      res.writeHead(200, { "content-type": "text/event-stream" });
      return stream(res, "/huge-sse", 'event: result\ndata: {"content":[{"type":"text","text":"', HUNDRED_MB);
    },
  });
  const dir = mkdtempSync(join(tmpdir(), "brain-limit-"));
  const binding = (name: string, path: string) => ({
    name,
    description: name,
    input_schema: { type: "object" },
    url: service.at(path),
    tenants: ["acme"],
    max_output_bytes: 1_048_576,
  });
  writeFileSync(
    join(dir, "brain.json"),
    JSON.stringify({
      listen: "127.0.0.1:0",
      store: { kind: "sqlite", path: join(dir, "brain.db") },
      tenants: [{ id: "acme", api_key_env: "KEY" }],
      models: [{ name: "default", provider: "scripted" }],
      tools: [binding("huge_json", "/huge-json"), binding("huge_sse", "/huge-sse")],
    }),
  );
  brain = await startProcess(
    [BRAIN_BIN, "-config", join(dir, "brain.json")],
    { KEY: "limit-key-123456" },
    brainUrlFromLog,
  );
  client = new BrainClient(brain.ready, "limit-key-123456");
});

afterAll(async () => {
  await brain?.stop();
  await service?.close();
});

describe("a service that streams 100 MB", () => {
  it.each([
    ["huge_json", "/huge-json"],
    ["huge_sse", "/huge-sse"],
  ])("%s is cut off at max_output_bytes while Brain's memory stays flat", async (tool, path) => {
    const pid = brain.child.pid as number;
    // warm up: the first turn loads code paths whose memory is not the output's
    const warm = await client.createSession({ script: [{ text: "warm" }] });
    await runTurn(client, warm.id, "x");
    const baseline = rssKiB(pid);
    let peak = baseline;
    const sampler = setInterval(() => {
      peak = Math.max(peak, rssKiB(pid));
    }, 2);

    const session = await client.createSession({
      tools: [tool],
      script: [{ tool_calls: [{ name: tool, arguments: {} }] }, { text: "x" }],
    });
    const events = await runTurn(client, session.id, "go");
    clearInterval(sampler);
    peak = Math.max(peak, rssKiB(pid));

    expect(events.find((e) => e.type === "tool.result")?.data).toMatchObject({
      is_error: true,
      unknown_outcome: true,
      error: { code: "output_too_large" },
    });
    // Brain hung up long before the 100 MB were sent
    expect(written.get(path) ?? 0).toBeLessThan(16 * 1024 * 1024);
    const growthMiB = (peak - baseline) / 1024;
    console.log(
      `${tool}: RSS baseline ${(baseline / 1024).toFixed(1)} MiB, peak +${growthMiB.toFixed(1)} MiB, service wrote ${((written.get(path) ?? 0) / 1048576).toFixed(1)} MiB`,
    );
    // a few MB: the 1 MiB that may be read, and V8's young generation growing under the allocation rate
    expect(growthMiB).toBeLessThan(12);
  });
});
