import { afterAll, beforeAll, expect, it } from "vitest";
import { resolveStorageConfig } from "../../services/storage/config.js";
import { startStorageService } from "../../services/storage/service.js";
import { type S3Server, s3BackendConfig, s3Env, startS3Server } from "./s3-server.js";
import { errorCode, startStorage, type TestStorage } from "./storage-service.js";

let s3: S3Server;
let service: TestStorage;

beforeAll(async () => {
  s3 = await startS3Server();
  service = await startStorage({ backend: s3BackendConfig(s3) }, s3Env(s3));
});
afterAll(async () => {
  await service?.close();
  await s3?.stop();
});

it("serves the tools from an S3 bucket", async () => {
  const written = await service.call("storage_write", { path: "reports/q3.md", content: "all good" });
  expect(written.structured).toMatchObject({ path: "reports/q3.md", size: 8, created: true });
  const read = await service.call("storage_read", { path: "reports/q3.md" });
  expect((read.raw.content as { text: string }[])[1]?.text).toBe("all good");
  expect(read.structured.etag).toBe(written.structured.etag);
  const other = await service.call("storage_read", { path: "reports/q3.md" }, { tenant_id: "globex" });
  expect(errorCode(other)).toBe("not_found");
  const removed = await service.call("storage_delete", { path: "reports/q3.md" });
  const { etag, modified } = written.structured;
  expect(removed.structured).toEqual({ path: "reports/q3.md", size: 8, etag, modified, deleted: true });
  expect(removed.text).toBe(`Deleted reports/q3.md: 8 bytes, etag ${etag}, modified ${modified}`);
});

it("refuses to start without its bucket, saying what to do", async () => {
  const resolved = resolveStorageConfig(
    { token_env: "T", listen: "127.0.0.1:0", backend: s3BackendConfig(s3, { bucket: "no-such-bucket" }) },
    { T: "token", ...s3Env(s3) },
    "/tmp",
  );
  if (!resolved.ok) throw new Error(resolved.problems.join("\n"));
  await expect(startStorageService(resolved.config)).rejects.toThrow(
    "S3 bucket no-such-bucket: it does not exist: create it first",
  );
});

it("answers backend_failed when the store is down, and never reveals the credentials", async () => {
  await s3.stop();
  const failed = await service.call("storage_write", { path: "late.md", content: "x" });
  expect(failed.status).toBe(200);
  expect(errorCode(failed)).toBe("backend_failed");
  expect(failed.text).toMatch(/may or may not have happened: check with storage_stat/);
  expect(JSON.stringify(failed.raw)).not.toContain(s3.secretAccessKey);
  expect(service.logs()).toContain("storage backend failed");
  expect(service.logs()).not.toContain(s3.secretAccessKey);
  expect(service.logs()).not.toContain(service.token);
});
