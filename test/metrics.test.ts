import { spawnSync } from "node:child_process";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startBrain, type TestBrain } from "./helpers/brain.js";
import { needs } from "./helpers/host-needs.js";

let brain: TestBrain;
let text: string;

beforeAll(async () => {
  brain = await startBrain();
  await brain.client().listSessions();
  text = await (await fetch(`${brain.url}/metrics`)).text();
});

afterAll(async () => {
  await brain?.stop();
});

/** Each metric family's name and type, from its `# TYPE` line. */
const families = () =>
  [...text.matchAll(/^# TYPE (\S+) (\S+)$/gm)].map(([, name, type]) => ({ name: String(name), type }));

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
