import { randomBytes } from "node:crypto";
import { constants } from "node:fs";
import { mkdir, mkdtemp, open, readdir, readFile, rename, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Pool } from "undici";
import { resolveStorageConfig } from "../services/storage/config.js";
import { startStorageService } from "../services/storage/service.js";
import { runWhenMain } from "./alone.js";
import { type Benchmark, versus } from "./section.js";
import { summarize, timeEach } from "./stats.js";

const OPERATIONS = 300;
const WARMUP = 30;
const OBJECT_BYTES = 4096;
const LISTED_OBJECTS = 1000;
const LIST_PAGE = 100;
const SCOPE = "tenants/bench/";

/**
 * The storage service on the filesystem backend: each operation through Storage against the raw
 * limit (the same durable write, or read, done with node:fs and nothing around it), and each tool
 * call over HTTP against the same operation in-process, which is the cost of the protocol.
 */
export const run: Benchmark = async (context) => {
  const root = await mkdtemp(join(tmpdir(), "bench-storage-"));
  const token = randomBytes(24).toString("base64url");
  const resolved = resolveStorageConfig(
    { listen: "127.0.0.1:0", token_env: "TOKEN", backend: { kind: "filesystem", root }, log_level: "warn" },
    { TOKEN: token },
    root,
  );
  if (!resolved.ok) throw new Error(resolved.problems.join("\n"));
  const service = await startStorageService(resolved.config);
  const pool = new Pool(service.url, { connections: 1 });
  const { storage } = service;
  const payload = randomBytes(OBJECT_BYTES);
  try {
    const raw = join(root, "raw");
    await mkdir(raw);
    const callTool = toolCaller(pool, token);
    const content = payload.toString("base64");
    context.log("storage: warming up");
    await timeEach(WARMUP, (i) => storage.write(SCOPE, `warm/${i}`, payload, {}));
    await timeEach(WARMUP, (i) => rawWrite(raw, `warm-${i}`, payload));

    context.log(`storage: ${OPERATIONS} writes and reads each way`);
    const writes = summarize(await timeEach(OPERATIONS, (i) => storage.write(SCOPE, `w/${i}`, payload, {})));
    const rawWrites = summarize(await timeEach(OPERATIONS, (i) => rawWrite(raw, `w-${i}`, payload)));
    const toolWrites = summarize(
      await timeEach(OPERATIONS, (i) =>
        callTool("storage_write", { path: `t/${i}`, content, encoding: "base64" }),
      ),
    );
    const reads = summarize(await timeEach(OPERATIONS, (i) => storage.read(SCOPE, `w/${i}`, {})));
    const rawReads = summarize(await timeEach(OPERATIONS, (i) => readFile(join(raw, `w-${i}`))));
    const toolReads = summarize(
      await timeEach(OPERATIONS, (i) => callTool("storage_read", { path: `w/${i}`, encoding: "base64" })),
    );

    context.log(`storage: listing ${LIST_PAGE} of ${LISTED_OBJECTS} objects`);
    for (let i = 0; i < LISTED_OBJECTS; i++)
      await storage.write(SCOPE, `many/${String(i).padStart(4, "0")}`, payload, {});
    const manyDir = join(root, "objects", SCOPE, "many");
    const lists = summarize(
      await timeEach(50, () => storage.list(SCOPE, { prefix: "many/", limit: LIST_PAGE })),
    );
    const rawLists = summarize(await timeEach(50, () => rawList(manyDir, LIST_PAGE)));

    return {
      id: "storage",
      title: "Storage service, filesystem backend (sequential, 4 KiB objects)",
      params: {
        operations: OPERATIONS,
        object_bytes: OBJECT_BYTES,
        listed_objects: LISTED_OBJECTS,
        page: LIST_PAGE,
      },
      figures: [
        versus("write p50 vs raw durable write", writes.p50, "temp+fsync+rename", rawWrites.p50),
        versus("write p99 vs raw durable write", writes.p99, "temp+fsync+rename", rawWrites.p99),
        versus("read p50 vs raw readFile", reads.p50, "readFile", rawReads.p50),
        versus("storage_write call p50 vs in-process", toolWrites.p50, "Storage.write", writes.p50),
        versus("storage_read call p50 vs in-process", toolReads.p50, "Storage.read", reads.p50),
        versus(
          `list ${LIST_PAGE} of ${LISTED_OBJECTS} p50 vs raw`,
          lists.p50,
          "readdir+sort+stat",
          rawLists.p50,
        ),
      ],
      notes: [
        "write: Storage.write (path check, scope lock, stat for the condition and the quota, temp file, fsync, rename, folder fsync, MD5 etag); raw: the same temp file, fsync, rename and folder fsync with node:fs alone.",
        "read: Storage.read (path check, folder walk refusing links, open without following links, fstat, cached etag, read); raw: readFile of a file of the same size.",
        "tool calls: undici Pool POST of the envelope Brain sends, base64 content, one connection; in-process: the same Storage call.",
        "list: one page of a 1000-object folder, which reads the folder, sorts by UTF-8 bytes and stats the page (etags cached); raw: readdir, sort, stat of the page.",
        "The S3 backend is not measured: the only S3-compatible server here (s3rver) is a test double, not a peer worth timing.",
      ],
    };
  } finally {
    await pool.close();
    await service.close();
    await rm(root, { recursive: true, force: true });
  }
};

/** The durable write with nothing around it: what the filesystem backend cannot beat. */
async function rawWrite(dir: string, name: string, data: Buffer): Promise<void> {
  const temp = join(dir, `${name}.tmp`);
  const handle = await open(temp, "w");
  await handle.writeFile(data);
  await handle.sync();
  await handle.close();
  await rename(temp, join(dir, name));
  const folder = await open(dir, constants.O_RDONLY | constants.O_DIRECTORY);
  await folder.sync();
  await folder.close();
}

async function rawList(dir: string, page: number): Promise<void> {
  const names = (await readdir(dir)).sort();
  await Promise.all(names.slice(0, page).map((name) => stat(join(dir, name))));
}

function toolCaller(pool: Pool, token: string) {
  return async (tool: string, args: Record<string, unknown>) => {
    const response = await pool.request({
      path: `/tools/${tool}`,
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${token}` },
      body: JSON.stringify({
        tenant_id: "bench",
        session_id: "ses_bench",
        call_id: "call_bench",
        arguments: args,
      }),
    });
    const result = (await response.body.json()) as { is_error?: boolean; content?: { text: string }[] };
    if (response.statusCode !== 200 || result.is_error) {
      throw new Error(`${tool} failed: ${response.statusCode} ${JSON.stringify(result).slice(0, 200)}`);
    }
  };
}

await runWhenMain(import.meta.url, run);
