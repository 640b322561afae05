import { request } from "undici";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BrainApiError, BrainClient } from "../../src/client/client.js";
import { startBrain, type TestBrain } from "../helpers/brain.js";
import { startToolService, type ToolService } from "../helpers/tool-service.js";
import { waitForEvents } from "../helpers/turns.js";

const INITECH_KEY = "key-initech-0123456789abcdef";
let service: ToolService;
let brain: TestBrain;

beforeAll(async () => {
  // never answers: a turn on it runs until interrupted
  service = await startToolService({ "/hang": () => {} });
  brain = await startBrain(
    {
      tenants: [
        { id: "acme", api_key_env: "KEY_ACME", requests_per_second: 5 },
        { id: "globex", api_key_env: "KEY_GLOBEX", max_concurrent_turns: 1, max_event_streams: 2 },
        { id: "initech", api_key_env: "KEY_INITECH" },
      ],
      tools: [
        {
          name: "hang",
          description: "Never answers.",
          input_schema: { type: "object" },
          url: service.at("/hang"),
          tenants: ["acme", "globex", "initech"],
        },
      ],
    },
    { env: { KEY_INITECH: INITECH_KEY } },
  );
});
afterAll(async () => {
  await brain?.stop();
  await service?.close();
});

const hanging = { tools: ["hang"], script: [{ tool_calls: [{ name: "hang", arguments: {} }] }] };

async function status(promise: Promise<unknown>): Promise<number | string> {
  try {
    await promise;
    return 200;
  } catch (error) {
    if (error instanceof BrainApiError) return `${error.status} ${error.code}`;
    throw error;
  }
}

describe("tenant limits", () => {
  it("answers a tenant over its requests_per_second 429 with Retry-After, while another tenant under load is never refused", async () => {
    const initech = new BrainClient(brain.url, INITECH_KEY);
    const session = await initech.createSession();
    // acme hammers Brain with 400 requests, 20 at a time, while initech runs turns
    const acmeAnswers: number[] = [];
    const retryAfter = new Set<string>();
    const began = Date.now();
    const hammer = (async () => {
      for (let round = 0; round < 20; round++) {
        const answers = await Promise.all(
          Array.from({ length: 20 }, () =>
            fetch(`${brain.url}/catalog`, { headers: { authorization: `Bearer ${brain.keys.acme}` } }),
          ),
        );
        for (const answer of answers) {
          acmeAnswers.push(answer.status);
          if (answer.status === 429) {
            retryAfter.add(answer.headers.get("retry-after") ?? "");
            expect(((await answer.json()) as { error: { code: string } }).error.code).toBe("rate_limited");
          } else await answer.arrayBuffer();
        }
      }
    })();
    const initechAnswers: (number | string)[] = [];
    for (let turn = 0; turn < 10; turn++) {
      initechAnswers.push(await status(initech.sendMessage(session.id, `turn ${turn}`)));
      await waitForEvents(initech, session.id, (events) => events.at(-1)?.type === "turn.completed");
      initechAnswers.push(await status(initech.catalog()));
    }
    await hammer;
    const seconds = (Date.now() - began) / 1000;
    expect(initechAnswers.every((answer) => answer === 200)).toBe(true);
    const admitted = acmeAnswers.filter((answer) => answer === 200).length;
    expect(acmeAnswers.filter((answer) => answer === 429).length).toBeGreaterThan(300);
    // a burst of 10, then 5 a second for as long as the hammering lasted
    expect(admitted).toBeGreaterThanOrEqual(10);
    expect(admitted).toBeLessThanOrEqual(10 + Math.ceil(5 * seconds) + 1);
    expect([...retryAfter]).toEqual(["1"]);
    const metrics = await (await fetch(`${brain.url}/metrics`)).text();
    expect(metrics).toMatch(/brain_tenant_limited_total\{tenant="acme",limit="requests_per_second"\} [1-9]/);
    expect(metrics).not.toMatch(/brain_tenant_limited_total\{tenant="initech"/);
  });

  it("refuses a turn past the tenant's max_concurrent_turns with 429 too_many_turns, and no other tenant's", async () => {
    const globex = brain.client("globex");
    const first = await globex.createSession(hanging);
    const second = await globex.createSession(hanging);
    await globex.sendMessage(first.id, "runs");
    const res = await fetch(`${brain.url}/sessions/${second.id}/messages`, {
      method: "POST",
      headers: { authorization: `Bearer ${brain.keys.globex}`, "content-type": "application/json" },
      body: JSON.stringify({ content: "refused" }),
    });
    expect(res.status).toBe(429);
    expect(res.headers.get("retry-after")).toBe("1");
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe("too_many_turns");
    // its running session still takes queued messages: they start no turn of their own
    expect(await globex.sendMessage(first.id, "later", { onBusy: "enqueue" })).toEqual({ queued: 1 });

    // another tenant runs as many turns as it likes meanwhile
    const initech = new BrainClient(brain.url, INITECH_KEY);
    const others = await Promise.all([1, 2, 3].map(() => initech.createSession(hanging)));
    for (const other of others) expect(await status(initech.sendMessage(other.id, "go"))).toBe(200);
    for (const other of others) await initech.close(other.id);

    await globex.close(first.id);
    expect(await status(globex.sendMessage(second.id, "now"))).toBe(200);
    await globex.close(second.id);
    const metrics = await (await fetch(`${brain.url}/metrics`)).text();
    expect(metrics).toMatch(/brain_tenant_limited_total\{tenant="globex",limit="max_concurrent_turns"\} 1/);
  });

  it("lets only one of two messages sent at once take the tenant's last turn", async () => {
    const globex = brain.client("globex");
    const sessions = await Promise.all([1, 2].map(() => globex.createSession(hanging)));
    const answers = await Promise.all(
      sessions.map((session) => status(globex.sendMessage(session.id, "race"))),
    );
    expect(answers.sort()).toEqual([200, "429 too_many_turns"]);
    for (const session of sessions) await globex.close(session.id);
  });

  it("refuses an event stream past the tenant's max_event_streams with 429 too_many_streams, and no other tenant's", async () => {
    const globex = brain.client("globex");
    const session = await globex.createSession();
    const stream = (key: string) =>
      request(`${brain.url}/sessions/${session.id}/events`, {
        headers: { authorization: `Bearer ${key}`, accept: "text/event-stream" },
      });
    const held = [await stream(brain.keys.globex), await stream(brain.keys.globex)];
    expect(held.map((response) => response.statusCode)).toEqual([200, 200]);
    const refused = await stream(brain.keys.globex);
    expect(refused.statusCode).toBe(429);
    expect(refused.headers["retry-after"]).toBe("1");
    expect(((await refused.body.json()) as { error: { code: string } }).error.code).toBe("too_many_streams");
    // reading events as JSON holds no stream
    expect((await globex.events(session.id)).length).toBeGreaterThan(0);
    // another tenant opens as many as it likes meanwhile
    const initech = new BrainClient(brain.url, INITECH_KEY);
    const theirs = await initech.createSession();
    const others = await Promise.all(
      [1, 2, 3].map(() =>
        request(`${brain.url}/sessions/${theirs.id}/events`, {
          headers: { authorization: `Bearer ${INITECH_KEY}`, accept: "text/event-stream" },
        }),
      ),
    );
    expect(others.map((response) => response.statusCode)).toEqual([200, 200, 200]);
    for (const other of others) other.body.destroy();

    // a stream that closes gives its place back
    held[0]?.body.destroy();
    await expect
      .poll(async () => {
        const again = await stream(brain.keys.globex);
        if (again.statusCode === 200) held[0] = again;
        else await again.body.dump();
        return again.statusCode;
      })
      .toBe(200);
    for (const response of held) response.body.destroy();
    const metrics = await (await fetch(`${brain.url}/metrics`)).text();
    expect(metrics).toMatch(/brain_tenant_limited_total\{tenant="globex",limit="max_event_streams"\} [1-9]/);
    expect(metrics).not.toMatch(/brain_tenant_limited_total\{tenant="initech"/);
  });
});
