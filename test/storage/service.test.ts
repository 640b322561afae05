import { request } from "undici";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { errorCode, startStorage, type TestStorage } from "./storage-service.js";

describe("the storage service over HTTP", () => {
  let service: TestStorage;

  beforeAll(async () => {
    service = await startStorage({
      limits: { max_object_bytes: 4096, max_read_bytes: 1024, quota_bytes: 100_000, quota_objects: 100 },
    });
  });
  afterAll(async () => {
    await service?.close();
  });

  it("answers only with the token, and lists its five tools with their schemas", async () => {
    const without = await request(`${service.url}/tools/storage_read`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: "{}",
    });
    expect(without.statusCode).toBe(401);
    await without.body.dump();
    const listed = await request(`${service.url}/tools`, {
      headers: { authorization: `Bearer ${service.token}` },
    });
    const manifest = (await listed.body.json()) as {
      tools: { name: string; input_schema: object; output_schema?: object }[];
    };
    expect(manifest.tools.map((tool) => tool.name)).toEqual([
      "storage_write",
      "storage_read",
      "storage_stat",
      "storage_list",
      "storage_delete",
    ]);
    for (const tool of manifest.tools) expect(tool.output_schema).toBeDefined();
  });

  it("writes, reads, stats, lists and deletes, with facts in structured_content and a readable text", async () => {
    const written = await service.call("storage_write", {
      path: "notes/plan.md",
      content: "# Plan\nship it\n",
    });
    expect(written).toMatchObject({ status: 200, is_error: false });
    expect(written.structured).toMatchObject({ path: "notes/plan.md", size: 15, created: true });
    expect(written.text).toMatch(/^Created notes\/plan\.md: 15 bytes, etag [0-9a-f]{32}, modified /);
    const etag = written.structured.etag as string;

    const read = await service.call("storage_read", { path: "notes/plan.md" });
    expect(read.is_error).toBe(false);
    expect((read.raw.content as { text: string }[])[1]?.text).toBe("# Plan\nship it\n");
    expect(read.structured).toMatchObject({
      path: "notes/plan.md",
      size: 15,
      etag,
      offset: 0,
      length: 15,
      encoding: "utf8",
    });
    expect(read.structured.next_offset).toBeUndefined();

    const stat = await service.call("storage_stat", { path: "notes/plan.md" });
    expect(stat.structured).toEqual({
      path: "notes/plan.md",
      size: 15,
      etag,
      modified: written.structured.modified,
    });

    const list = await service.call("storage_list", { prefix: "notes/" });
    expect(list.structured).toMatchObject({
      prefix: "notes/",
      objects: [{ path: "notes/plan.md", size: 15, etag }],
    });
    expect(list.text).toMatch(/^1 file under "notes\/":\nnotes\/plan\.md\t15 bytes/);

    const replaced = await service.call("storage_write", {
      path: "notes/plan.md",
      content: "v2",
      if_match: etag,
    });
    expect(replaced.structured.created).toBe(false);
    const removed = await service.call("storage_delete", {
      path: "notes/plan.md",
      if_match: replaced.structured.etag,
    });
    expect(removed.structured).toEqual({
      path: "notes/plan.md",
      size: 2,
      etag: replaced.structured.etag,
      modified: replaced.structured.modified,
      deleted: true,
    });
    expect(removed.text).toMatch(/^Deleted notes\/plan\.md: 2 bytes, etag [0-9a-f]{32}, modified \S+Z$/);
    expect(errorCode(await service.call("storage_stat", { path: "notes/plan.md" }))).toBe("not_found");
  });

  it("hides a tenant's files from every other tenant, and shares them among its sessions", async () => {
    await service.call("storage_write", { path: "private.md", content: "acme only" }, { tenant_id: "acme" });
    const other = { tenant_id: "globex", session_id: "ses_globex" };
    expect(errorCode(await service.call("storage_read", { path: "private.md" }, other))).toBe("not_found");
    expect(errorCode(await service.call("storage_stat", { path: "private.md" }, other))).toBe("not_found");
    expect(errorCode(await service.call("storage_delete", { path: "private.md" }, other))).toBe("not_found");
    expect((await service.call("storage_list", {}, other)).structured.objects).toEqual([]);
    // the only way to name a scope is the top-level identity: arguments cannot carry one
    const smuggled = await service.call("storage_read", { path: "private.md", tenant_id: "acme" }, other);
    expect(smuggled.is_error).toBe(true);
    expect(smuggled.text).toMatch(/tenant_id/);
    for (const path of ["../acme/private.md", "../../tenants/acme/private.md", "/tenants/acme/private.md"]) {
      expect(errorCode(await service.call("storage_read", { path }, other)), path).toBe("invalid_path");
    }
    const sibling = await service.call(
      "storage_read",
      { path: "private.md" },
      { tenant_id: "acme", session_id: "ses_2" },
    );
    expect((sibling.raw.content as { text: string }[])[1]?.text).toBe("acme only");
  });

  it("lets exactly one of two concurrent writers with the same if_match win", async () => {
    const base = await service.call("storage_write", { path: "race.txt", content: "base" });
    const etag = base.structured.etag;
    const [first, second] = await Promise.all([
      service.call("storage_write", { path: "race.txt", content: "first", if_match: etag }),
      service.call("storage_write", { path: "race.txt", content: "second", if_match: etag }),
    ]);
    expect([first.is_error, second.is_error].sort()).toEqual([false, true]);
    const loser = first.is_error ? first : second;
    const winner = first.is_error ? "second" : "first";
    expect(errorCode(loser)).toBe("precondition_failed");
    expect(loser.text).toMatch(/race\.txt has changed/);
    const read = await service.call("storage_read", { path: "race.txt" });
    expect((read.raw.content as { text: string }[])[1]?.text).toBe(winner);
  });

  it("pages through text by bytes without splitting a character", async () => {
    const text = `${"é".repeat(600)}end`; // 1203 bytes
    await service.call("storage_write", { path: "long.txt", content: text });
    expect(errorCode(await service.call("storage_read", { path: "long.txt" }))).toBe("range_too_large");
    let offset = 0;
    let joined = "";
    for (let reads = 0; reads < 5; reads++) {
      const part = await service.call("storage_read", { path: "long.txt", offset, length: 1001 });
      expect(part.is_error).toBe(false);
      joined += (part.raw.content as { text: string }[])[1]?.text;
      if (part.structured.next_offset === undefined) break;
      offset = part.structured.next_offset as number;
    }
    expect(joined).toBe(text);
  });

  it("stores binary content in base64 and says how to read bytes that are not text", async () => {
    const bytes = Buffer.from([0, 255, 1, 254, 10]);
    const written = await service.call("storage_write", {
      path: "b.bin",
      content: bytes.toString("base64"),
      encoding: "base64",
    });
    expect(written.structured.size).toBe(5);
    const asText = await service.call("storage_read", { path: "b.bin" });
    expect(errorCode(asText)).toBe("not_utf8");
    expect(asText.text).toMatch(/encoding "base64"/);
    const asBase64 = await service.call("storage_read", { path: "b.bin", encoding: "base64" });
    expect((asBase64.raw.content as { text: string }[])[1]?.text).toBe(bytes.toString("base64"));
    expect(
      errorCode(await service.call("storage_write", { path: "c.bin", content: "%%%", encoding: "base64" })),
    ).toBe("invalid_argument");
  });

  it("refuses objects over max_object_bytes with a clear result, writing nothing", async () => {
    const big = Buffer.alloc(4097, 1).toString("base64");
    const refused = await service.call("storage_write", {
      path: "big.bin",
      content: big,
      encoding: "base64",
    });
    expect(errorCode(refused)).toBe("too_large");
    expect(refused.text).toMatch(/4097 bytes; objects are at most 4096 bytes/);
    expect(errorCode(await service.call("storage_stat", { path: "big.bin" }))).toBe("not_found");
  });

  it("pages lists with a cursor", async () => {
    const identity = { tenant_id: "pager" };
    for (const name of ["a", "b", "c", "d", "e"])
      await service.call("storage_write", { path: name, content: name }, identity);
    const first = await service.call("storage_list", { limit: 2 }, identity);
    expect((first.structured.objects as { path: string }[]).map((object) => object.path)).toEqual(["a", "b"]);
    expect(first.text).toMatch(/More files follow: pass cursor "/);
    const second = await service.call(
      "storage_list",
      { limit: 3, cursor: first.structured.next_cursor },
      identity,
    );
    expect((second.structured.objects as { path: string }[]).map((object) => object.path)).toEqual([
      "c",
      "d",
      "e",
    ]);
    expect(second.structured.next_cursor).toBeUndefined();
  });

  it("never logs its token", () => {
    expect(service.logs()).toContain("tool call answered");
    expect(service.logs()).not.toContain(service.token);
  });
});

describe("a storage service with a small quota", () => {
  it("refuses writes past the quota with what to do, and recovers after deletes", async () => {
    const service = await startStorage({ limits: { quota_bytes: 1000, quota_objects: 2 } });
    try {
      expect((await service.call("storage_write", { path: "a", content: "x".repeat(600) })).is_error).toBe(
        false,
      );
      const over = await service.call("storage_write", { path: "b", content: "x".repeat(500) });
      expect(errorCode(over)).toBe("quota_exceeded");
      expect(over.text).toMatch(/would use 1100 of this storage's 1000 bytes; delete files to make room/);
      expect(over.structured).toMatchObject({ used_bytes: 600, quota_bytes: 1000 });
      expect((await service.call("storage_write", { path: "b", content: "x".repeat(400) })).is_error).toBe(
        false,
      );
      expect(errorCode(await service.call("storage_write", { path: "c", content: "x" }))).toBe(
        "quota_exceeded",
      );
      // another tenant's quota is its own
      expect(
        (await service.call("storage_write", { path: "c", content: "x" }, { tenant_id: "globex" })).is_error,
      ).toBe(false);
      await service.call("storage_delete", { path: "a" });
      expect((await service.call("storage_write", { path: "c", content: "x".repeat(600) })).is_error).toBe(
        false,
      );
    } finally {
      await service.close();
    }
  });
});

describe("a storage service scoped per session", () => {
  it("keeps each session's files from the tenant's other sessions", async () => {
    const service = await startStorage({ scope: "session" });
    try {
      await service.call("storage_write", { path: "scratch.md", content: "mine" }, { session_id: "ses_a" });
      const other = await service.call("storage_read", { path: "scratch.md" }, { session_id: "ses_b" });
      expect(errorCode(other)).toBe("not_found");
      const mine = await service.call("storage_read", { path: "scratch.md" }, { session_id: "ses_a" });
      expect((mine.raw.content as { text: string }[])[1]?.text).toBe("mine");
    } finally {
      await service.close();
    }
  });
});
