import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startBrain, type TestBrain } from "./helpers/brain.js";
import { needs } from "./helpers/host-needs.js";
import { sendJson, startToolService, type ToolService, textResult } from "./helpers/tool-service.js";
import { runTurn, waitForEvents } from "./helpers/turns.js";

const TOOL_TOKEN = "metrics-tool-token-3a9f";

let brain: TestBrain;
let service: ToolService;
let sessionId: string;
let text: string;

beforeAll(async () => {
  service = await startToolService({ "/echo": (_call, res) => sendJson(res, textResult("echoed")) });
  brain = await startBrain(
    {
      tools: [
        {
          name: "echo",
          description: "echo",
          input_schema: { type: "object" },
          url: service.at("/echo"),
          token_env: "TOOL_TOKEN",
          tenants: ["acme"],
        },
      ],
    },
    { env: { TOOL_TOKEN } },
  );
  const client = brain.client();
  await client.listSessions();
  const session = await client.createSession({
    tools: ["echo"],
    script: [
      { tool_calls: [{ name: "echo", arguments: {} }], usage: { input_tokens: 100, output_tokens: 20 } },
      { text: "done", usage: { input_tokens: 150, output_tokens: 3 } },
    ],
  });
  sessionId = session.id;
  await runTurn(client, session.id, "go");
  text = await (await fetch(`${brain.url}/metrics`)).text();
});

afterAll(async () => {
  await brain?.stop();
  await service?.close();
});

/** Each metric family's name and type, from its `# TYPE` line. */
const families = () =>
  [...text.matchAll(/^# TYPE (\S+) (\S+)$/gm)].map(([, name, type]) => ({ name: String(name), type }));

/** A sample of the metrics Brain serves now. */
async function scraped(name: string): Promise<number> {
  const now = await (await fetch(`${brain.url}/metrics`)).text();
  return Number(
    now
      .split("\n")
      .find((line) => line.startsWith(`${name} `))
      ?.split(" ")[1],
  );
}

describe("/metrics of a real Brain", () => {
  it("has Node's process metrics under the names the usual dashboards query", () => {
    expect(families()).toEqual(
      expect.arrayContaining([
        { name: "process_cpu_seconds_total", type: "counter" },
        { name: "process_resident_memory_bytes", type: "gauge" },
        { name: "process_start_time_seconds", type: "gauge" },
        { name: "process_open_fds", type: "gauge" },
        { name: "nodejs_heap_size_used_bytes", type: "gauge" },
        { name: "nodejs_eventloop_lag_seconds", type: "gauge" },
        { name: "nodejs_active_handles", type: "gauge" },
        { name: "nodejs_gc_duration_seconds", type: "histogram" },
        { name: "nodejs_version_info", type: "gauge" },
        { name: "brain_http_requests_total", type: "counter" },
      ]),
    );
    expect(text).not.toContain("brain_process_");
  });

  it("has Brain's model, turn, tool, store, lease and event-stream metrics", () => {
    expect(families()).toEqual(
      expect.arrayContaining([
        { name: "brain_model_calls_total", type: "counter" },
        { name: "brain_model_call_duration_seconds", type: "histogram" },
        { name: "brain_model_tokens_total", type: "counter" },
        { name: "brain_turns_total", type: "counter" },
        { name: "brain_turn_duration_seconds", type: "histogram" },
        { name: "brain_tool_calls_total", type: "counter" },
        { name: "brain_tool_call_duration_seconds", type: "histogram" },
        { name: "brain_tool_calls_in_flight", type: "gauge" },
        { name: "brain_store_append_duration_seconds", type: "histogram" },
        { name: "brain_turn_leases_held", type: "gauge" },
        { name: "brain_sse_clients", type: "gauge" },
        { name: "brain_sse_bytes_total", type: "counter" },
      ]),
    );
    const sample = (line: string) =>
      Number(
        text
          .split("\n")
          .find((l) => l.startsWith(`${line} `))
          ?.split(" ")[1],
      );
    expect(sample('brain_model_calls_total{model="default",provider="scripted",outcome="ok"}')).toBe(2);
    expect(sample('brain_model_tokens_total{model="default",provider="scripted",type="input"}')).toBe(250);
    expect(sample('brain_model_tokens_total{model="default",provider="scripted",type="output"}')).toBe(23);
    expect(sample('brain_turn_duration_seconds_count{end="completed"}')).toBe(1);
    expect(sample("brain_tool_calls_in_flight")).toBe(0);
    expect(sample("brain_turn_leases_held")).toBe(0);
    expect(sample("brain_store_append_duration_seconds_count")).toBeGreaterThanOrEqual(4);
    expect(sample("brain_sse_bytes_total")).toBeGreaterThan(0);
  });

  it("counts the event frames' bytes each client was sent, in UTF-8, live or from the log", async () => {
    const client = brain.client();
    const session = await client.createSession({ script: [{ text: "déjà vu ✓, ünïcödé" }] });
    const before = await scraped("brain_sse_bytes_total");
    // after session.created: what follows comes live if the stream is in place, else from the log
    const response = await fetch(`${brain.url}/sessions/${session.id}/events`, {
      headers: {
        authorization: `Bearer ${brain.keys.acme}`,
        accept: "text/event-stream",
        "last-event-id": "1",
      },
    });
    const reader = (response.body as ReadableStream<Uint8Array>).getReader();
    const chunks: Uint8Array[] = [(await reader.read()).value as Uint8Array];
    await client.sendMessage(session.id, "go");
    await waitForEvents(client, session.id, (events) => events.at(-1)?.type === "turn.completed");
    await client.close(session.id);
    for (let read = await reader.read(); !read.done; read = await reader.read()) chunks.push(read.value);
    const received = Buffer.concat(chunks).toString("utf8");
    expect(received).toContain("déjà vu ✓, ünïcödé");
    expect(received).toContain("event: session.closed");
    const frames = received.slice(received.indexOf("\n\n") + 2);
    expect(received.slice(0, received.indexOf("\n\n"))).toBe("retry: 1000");
    expect((await scraped("brain_sse_bytes_total")) - before).toBe(Buffer.byteLength(frames));
  });

  it("carries no id, key or token in a label", () => {
    for (const secret of [sessionId, TOOL_TOKEN, brain.keys.acme, brain.keys.globex])
      expect(text).not.toContain(secret);
    expect(text).not.toMatch(/"(sess|call|msg)_[A-Za-z0-9]/);
  });

  it("serves every metric the example Grafana dashboard queries", () => {
    const dashboard = JSON.parse(
      readFileSync(new URL("../examples/grafana-dashboard.json", import.meta.url), "utf8"),
    );
    const queries: string[] = dashboard.panels.flatMap((panel: { targets?: { expr: string }[] }) =>
      (panel.targets ?? []).map((target) => target.expr),
    );
    const queried = new Set(
      queries.flatMap((expr) =>
        [...expr.matchAll(/\b((?:brain|process|nodejs)_[a-z_]+)\{/g)].map(([, name]) =>
          String(name).replace(/_(bucket|count|sum)$/, ""),
        ),
      ),
    );
    expect(queried.size).toBeGreaterThan(10);
    const served = new Set(families().map((family) => family.name));
    expect([...queried].filter((name) => !served.has(name))).toEqual([]);
  });

  it("ends exactly the counters' names in _total, as Prometheus' naming rules say", () => {
    const misnamed = families().filter(({ name, type }) => (type === "counter") !== name.endsWith("_total"));
    expect(misnamed).toEqual([]);
  });

  it("passes promtool check metrics", needs("promtool"), () => {
    const lint = spawnSync("promtool", ["check", "metrics"], { input: text, encoding: "utf8" });
    expect(`${lint.stdout}${lint.stderr}`).toBe("");
    expect(lint.status).toBe(0);
  });
});
