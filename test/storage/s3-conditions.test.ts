import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { scopePrefix } from "../../services/storage/paths.js";
import { unwrap } from "./backend-conformance.js";
import {
  conditionalRequestConflict,
  type ForwardedRequest,
  preconditionFailed,
  type S3ErrorAnswer,
  type S3Forward,
  startS3Forward,
} from "./s3-forward.js";
import { type S3Server, s3BackendConfig, s3Env, startS3Server } from "./s3-server.js";
import { errorCode, startStorage, type TestStorage, type ToolAnswer } from "./storage-service.js";

// s3rver ignores If-Match and If-None-Match, so the service reaches it through a forward that
// records what the S3 client sends and can answer a request as AWS S3 does when a condition fails

let s3: S3Server;
let forward: S3Forward;
let service: TestStorage;

beforeAll(async () => {
  s3 = await startS3Server();
  forward = await startS3Forward(s3.endpoint);
  service = await startStorage({ backend: s3BackendConfig(s3, { endpoint: forward.endpoint }) }, s3Env(s3));
});
afterAll(async () => {
  await service?.close();
  await forward?.stop();
  await s3?.stop();
});

/** The requests the S3 client sent while `call` ran. */
async function sentDuring(call: () => Promise<ToolAnswer>) {
  const from = forward.requests.length;
  const answer = await call();
  return { answer, sent: forward.requests.slice(from) };
}

/** The conditional headers of each `method` request to an object at `path`. */
function conditionsOf(sent: ForwardedRequest[], method: string, path: string) {
  return sent
    .filter((request) => request.method === method && request.path.endsWith(`/${path}`))
    .map(({ headers }) => ({
      ...(headers["if-match"] !== undefined && { "if-match": headers["if-match"] }),
      ...(headers["if-none-match"] !== undefined && { "if-none-match": headers["if-none-match"] }),
    }));
}

const write = async (path: string, content: string) => {
  const written = await service.call("storage_write", { path, content });
  expect(written.is_error).toBe(false);
  return written.structured.etag as string;
};

describe("the S3 backend sends each condition on to the store", () => {
  it("a write's if_match as If-Match with the quoted etag, whichever form it came in", async () => {
    const v1 = await write("sent/match.md", "v1");
    const bare = await sentDuring(() =>
      service.call("storage_write", { path: "sent/match.md", content: "v2", if_match: v1 }),
    );
    expect(bare.answer.is_error).toBe(false);
    expect(conditionsOf(bare.sent, "PUT", "sent/match.md")).toEqual([{ "if-match": `"${v1}"` }]);
    const v2 = bare.answer.structured.etag as string;
    const weak = await sentDuring(() =>
      service.call("storage_write", { path: "sent/match.md", content: "v3", if_match: `W/"${v2}"` }),
    );
    expect(weak.answer.is_error).toBe(false);
    expect(conditionsOf(weak.sent, "PUT", "sent/match.md")).toEqual([{ "if-match": `"${v2}"` }]);
  });

  it('a write\'s if_none_match "*" as If-None-Match: *', async () => {
    const created = await sentDuring(() =>
      service.call("storage_write", { path: "sent/new.md", content: "first", if_none_match: "*" }),
    );
    expect(created.answer.structured.created).toBe(true);
    expect(conditionsOf(created.sent, "PUT", "sent/new.md")).toEqual([{ "if-none-match": "*" }]);
  });

  it("a delete's if_match as If-Match with the quoted etag", async () => {
    const etag = await write("sent/gone.md", "bye");
    const deleted = await sentDuring(() =>
      service.call("storage_delete", { path: "sent/gone.md", if_match: etag }),
    );
    expect(deleted.answer.structured.deleted).toBe(true);
    expect(conditionsOf(deleted.sent, "DELETE", "sent/gone.md")).toEqual([{ "if-match": `"${etag}"` }]);
  });

  it("no condition when the call gives none", async () => {
    const written = await sentDuring(() =>
      service.call("storage_write", { path: "sent/plain.md", content: "x" }),
    );
    expect(conditionsOf(written.sent, "PUT", "sent/plain.md")).toEqual([{}]);
    const deleted = await sentDuring(() => service.call("storage_delete", { path: "sent/plain.md" }));
    expect(conditionsOf(deleted.sent, "DELETE", "sent/plain.md")).toEqual([{}]);
  });
});

describe("a condition the store refuses is a precondition_failed refusal that changes nothing", () => {
  // the scope of the calls' default identity
  const scope = unwrap(scopePrefix("tenant", { tenant_id: "acme", session_id: "ses_test" }));

  /** What a caller and the quota can see of `path`: its facts (or refusal), and the scope's usage. */
  const state = async (path: string) => {
    const stat = await service.call("storage_stat", { path });
    return {
      object: stat.is_error ? errorCode(stat) : stat.structured,
      usage: await service.running.storage.usage(scope),
    };
  };

  /**
   * Make the call with the store answering `answer` to its `method` request for `path`, which
   * must carry `header`: S3 refuses only a request that states a condition.
   */
  async function refusedByStore(
    path: string,
    request: { method: "PUT" | "DELETE"; header: "if-match" | "if-none-match" },
    answer: S3ErrorAnswer,
    call: () => Promise<ToolAnswer>,
  ) {
    const before = await state(path);
    forward.refuseNext(
      (sent) =>
        sent.method === request.method &&
        sent.path.endsWith(`/${path}`) &&
        sent.headers[request.header] !== undefined,
      answer,
    );
    const { answer: refused, sent } = await sentDuring(call);
    expect(sent.map((each) => each.refusedWith).filter(Boolean)).toEqual([answer.code]);
    expect(refused).toMatchObject({ status: 200, is_error: true });
    expect(errorCode(refused)).toBe("precondition_failed");
    expect(await state(path)).toEqual(before);
    // the usage kept by the service is still what the store holds
    expect(before.usage).toEqual(await service.running.storage.backend.usage(scope));
  }

  it("a write's if_match answered 412 PreconditionFailed", async () => {
    const etag = await write("refused/match.md", "theirs");
    await refusedByStore(
      "refused/match.md",
      { method: "PUT", header: "if-match" },
      preconditionFailed("If-Match"),
      () => service.call("storage_write", { path: "refused/match.md", content: "mine", if_match: etag }),
    );
  });

  it('a write\'s if_none_match "*" answered 412 PreconditionFailed', async () => {
    await refusedByStore(
      "refused/new.md",
      { method: "PUT", header: "if-none-match" },
      preconditionFailed("If-None-Match"),
      () => service.call("storage_write", { path: "refused/new.md", content: "mine", if_none_match: "*" }),
    );
  });

  it("a conditional write answered 409 ConditionalRequestConflict", async () => {
    const etag = await write("refused/raced.md", "theirs");
    await refusedByStore(
      "refused/raced.md",
      { method: "PUT", header: "if-match" },
      conditionalRequestConflict,
      () => service.call("storage_write", { path: "refused/raced.md", content: "mine", if_match: etag }),
    );
  });

  it("a delete's if_match answered 412 PreconditionFailed", async () => {
    const etag = await write("refused/kept.md", "still here");
    await refusedByStore(
      "refused/kept.md",
      { method: "DELETE", header: "if-match" },
      preconditionFailed("If-Match"),
      () => service.call("storage_delete", { path: "refused/kept.md", if_match: etag }),
    );
  });
});

describe("an empty object on S3", () => {
  // AWS answers any range of an empty object 416 InvalidRange (s3rver drops the connection, so
  // the shared suite skips its empty-object case there); the facts alone answer the read
  it("reads as empty with its facts when the store answers the ranged GET 416", async () => {
    const written = await service.call("storage_write", { path: "empty/none.txt", content: "" });
    expect(written.structured.size).toBe(0);
    forward.refuseNext(
      (sent) =>
        sent.method === "GET" && sent.path.endsWith("/empty/none.txt") && sent.headers.range !== undefined,
      { status: 416, code: "InvalidRange", message: "The requested range is not satisfiable" },
    );
    const { answer, sent } = await sentDuring(() => service.call("storage_read", { path: "empty/none.txt" }));
    expect(sent.map((each) => each.refusedWith).filter(Boolean)).toEqual(["InvalidRange"]);
    expect(answer.is_error).toBe(false);
    expect(answer.structured).toMatchObject({ size: 0, etag: written.structured.etag, offset: 0, length: 0 });
  });
});
