import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SqliteStore } from "../../src/store/sqlite.js";
import { StoreUnavailableError } from "../../src/store/store.js";
import { startBrain, type TestBrain } from "../helpers/brain.js";
import { overridden } from "../helpers/overridden-store.js";
import { waitForEvents } from "../helpers/turns.js";

let brain: TestBrain;

beforeAll(async () => {
  brain = await startBrain();
});
afterAll(async () => brain?.stop());

async function post(path: string, body: unknown, key?: string, tenant: "acme" | "globex" = "acme") {
  const res = await fetch(`${brain.url}${path}`, {
    method: "POST",
    headers: {
      authorization: `Bearer ${brain.keys[tenant]}`,
      "content-type": "application/json",
      ...(key !== undefined && { "idempotency-key": key }),
    },
    body: JSON.stringify(body),
  });
  // biome-ignore lint/suspicious/noExplicitAny: a test reads the answers' fields
  return { status: res.status, headers: res.headers, json: (await res.json()) as any };
}

describe("Idempotency-Key", () => {
  it("gives a retried POST /sessions the first answer again and creates one session", async () => {
    const key = randomUUID();
    const body = { config: { metadata: { order: 42 } } };
    const first = await post("/sessions", body, key);
    expect(first.status).toBe(201);
    expect(first.headers.get("idempotent-replayed")).toBeNull();
    const again = await post("/sessions", body, key);
    expect(again.status).toBe(201);
    expect(again.json).toEqual(first.json);
    expect(again.headers.get("location")).toBe(`/sessions/${first.json.id}`);
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    const listed = await brain.client().listSessions({ limit: 100 });
    expect(listed.sessions.filter((s) => s.config.metadata.order === 42)).toHaveLength(1);
  });

  it("refuses the same key with another body (422), and keeps keys apart by tenant", async () => {
    const key = randomUUID();
    expect((await post("/sessions", { config: { metadata: { a: 1 } } }, key)).status).toBe(201);
    const other = await post("/sessions", { config: { metadata: { a: 2 } } }, key);
    expect(other.status).toBe(422);
    expect(other.json.error.code).toBe("idempotency_key_reused");
    // another tenant's request with the same key is its own
    expect((await post("/sessions", { config: { metadata: { a: 2 } } }, key, "globex")).status).toBe(201);
  });

  it("gives a retried message the first answer again and stores it once: one turn", async () => {
    const session = await brain.client().createSession();
    const key = randomUUID();
    const first = await post(`/sessions/${session.id}/messages`, { content: "once" }, key);
    expect(first.status).toBe(202);
    await waitForEvents(brain.client(), session.id, (events) => events.at(-1)?.type === "turn.completed");
    const again = await post(`/sessions/${session.id}/messages`, { content: "once" }, key);
    expect([again.status, again.json]).toEqual([202, first.json]);
    const events = await brain.client().events(session.id);
    expect(events.filter((e) => e.type === "message.user")).toHaveLength(1);
    // the same key for another session is another request
    const elsewhere = await brain.client().createSession();
    expect((await post(`/sessions/${elsewhere.id}/messages`, { content: "once" }, key)).status).toBe(422);
  });

  it("takes a retry written differently for the same request: fields reordered, the path escaped", async () => {
    const session = await brain.client().createSession();
    const key = randomUUID();
    const first = await post(
      `/sessions/${session.id}/messages`,
      { content: "once", on_busy: "enqueue" },
      key,
    );
    expect(first.status).toBe(202);
    const reordered = await post(
      `/sessions/${session.id}/messages`,
      { on_busy: "enqueue", content: "once" },
      key,
    );
    expect([reordered.status, reordered.headers.get("idempotent-replayed")]).toEqual([202, "true"]);
    const escaped = session.id.replace("_", "%5F");
    const viaEscape = await post(
      `/sessions/${escaped}/messages`,
      { content: "once", on_busy: "enqueue" },
      key,
    );
    expect([viaEscape.status, viaEscape.headers.get("idempotent-replayed")]).toEqual([202, "true"]);
    await waitForEvents(brain.client(), session.id, (events) => events.at(-1)?.type === "turn.completed");
    const events = await brain.client().events(session.id);
    expect(events.filter((e) => e.type === "message.user")).toHaveLength(1);
  });

  it("keeps no refusal: a message refused as busy may be sent again with its key", async () => {
    const session = await brain
      .client()
      .createSession({ script: [{ text: "slow", delay_ms: 60_000 }, { text: "ok" }] });
    await brain.client().sendMessage(session.id, "first");
    const key = randomUUID();
    const refused = await post(`/sessions/${session.id}/messages`, { content: "second" }, key);
    expect([refused.status, refused.json.error.code]).toEqual([409, "session_busy"]);
    await brain.client().interrupt(session.id);
    const accepted = await post(`/sessions/${session.id}/messages`, { content: "second" }, key);
    expect(accepted.status).toBe(202);
    await brain.client().interrupt(session.id);
  });

  it("runs concurrent requests with one key once: the others wait their turn or get the answer", async () => {
    const key = randomUUID();
    const answers = await Promise.all(
      Array.from({ length: 8 }, () => post("/sessions", { config: { metadata: { racing: key } } }, key)),
    );
    const created = answers.filter((answer) => answer.status === 201);
    expect(new Set(created.map((answer) => answer.json.id)).size).toBe(1);
    for (const answer of answers.filter((a) => a.status !== 201)) {
      expect([answer.status, answer.json.error.code, answer.headers.get("retry-after")]).toEqual([
        409,
        "idempotency_key_in_use",
        "1",
      ]);
    }
    const listed = await brain.client().listSessions({ limit: 100 });
    expect(listed.sessions.filter((s) => s.config.metadata.racing === key)).toHaveLength(1);
  });

  it("refuses a malformed key", async () => {
    const answer = await post("/sessions", {}, "has spaces");
    expect([answer.status, answer.json.error.code]).toEqual([400, "invalid_request"]);
    expect((await post("/sessions", {}, "x".repeat(256))).status).toBe(400);
  });
});

describe("Idempotency-Key, with a store that cannot keep an answer for a while", () => {
  // the store's answers to settle a key fail as an unreachable PostgreSQL's do, `failing` times
  let failing = 0;
  let flaky: TestBrain;
  beforeAll(async () => {
    // the failures are those of a wrapped SQLite store, on either project's run
    flaky = await startBrain(
      { store: { kind: "sqlite", path: "brain.db" } },
      {
        start: {
          openStore: (path) => {
            const failingFirst =
              <A extends unknown[]>(own: (...args: A) => Promise<void>) =>
              (...args: A): Promise<void> => {
                if (failing === 0) return own(...args);
                failing -= 1;
                return Promise.reject(
                  new StoreUnavailableError("PostgreSQL cannot be reached; nothing was lost"),
                );
              };
            return overridden(new SqliteStore(path), {
              answerIdempotencyKey: failingFirst,
              releaseIdempotencyKey: failingFirst,
            });
          },
        },
      },
    );
  });
  afterAll(async () => flaky?.stop());

  const postTo = async (body: unknown, key: string) => {
    const res = await fetch(`${flaky.url}/sessions`, {
      method: "POST",
      headers: {
        authorization: `Bearer ${flaky.keys.acme}`,
        "content-type": "application/json",
        "idempotency-key": key,
      },
      body: JSON.stringify(body),
    });
    // biome-ignore lint/suspicious/noExplicitAny: a test reads the answers' fields
    return { status: res.status, headers: res.headers, json: (await res.json()) as any };
  };

  it("answers what was done, and keeps the answer for a retry once the store takes it: one session", async () => {
    const key = randomUUID();
    const body = { config: { metadata: { flaky: 1 } } };
    failing = 2;
    const first = await postTo(body, key);
    expect(first.status).toBe(201);
    // until the answer is kept a retry is told to wait; then it gets the first answer again
    let again = await postTo(body, key);
    while (again.status === 409) {
      expect(again.json.error.code).toBe("idempotency_key_in_use");
      await new Promise((resolve) => setTimeout(resolve, 50));
      again = await postTo(body, key);
    }
    expect(again.status).toBe(201);
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(again.json.id).toBe(first.json.id);
    const listed = await flaky.client().listSessions({ limit: 100 });
    expect(listed.sessions.filter((s) => s.config.metadata.flaky === 1)).toHaveLength(1);
  });

  it("frees the key of a refused request once the store takes it, so it may be sent again", async () => {
    const key = randomUUID();
    const session = await flaky.client().createSession();
    await flaky.client().close(session.id);
    const message = (k: string) =>
      fetch(`${flaky.url}/sessions/${session.id}/messages`, {
        method: "POST",
        headers: {
          authorization: `Bearer ${flaky.keys.acme}`,
          "content-type": "application/json",
          "idempotency-key": k,
        },
        body: JSON.stringify({ content: "hello" }),
      });
    failing = 1;
    const refused = await message(key);
    expect(refused.status).toBe(409);
    expect(((await refused.json()) as { error: { code: string } }).error.code).toBe("session_closed");
    await expect
      .poll(async () => ((await (await message(key)).json()) as { error: { code: string } }).error.code)
      .toBe("session_closed");
  });
});
