import { Type } from "@sinclair/typebox";
import { defineTool, type Tool, type ToolContext, type ToolResultObject } from "../../kit/index.js";
import { StringEnum } from "../../protocol/validation.js";
import { decodeContent, decodeTextWindow } from "./encoding.js";
import type { Outcome } from "./errors.js";
import { MAX_PATH_BYTES, type ScopeMode, scopePrefix } from "./paths.js";
import { describe, errorResult, facts } from "./render.js";
import type { Storage } from "./storage.js";

const strict = { additionalProperties: false } as const;

const PathArg = Type.String({
  minLength: 1,
  maxLength: MAX_PATH_BYTES,
  description:
    'A file in your storage, such as "notes/todo.md": folders separated by "/", with no leading "/" and no "." or ".." parts.',
});
const EtagArg = (description: string) =>
  Type.Optional(Type.String({ minLength: 1, maxLength: 256, description }));
const EncodingArg = (description: string) =>
  Type.Optional(StringEnum(["utf8", "base64"], { default: "utf8", description }));

const Facts = {
  path: Type.String(),
  size: Type.Integer({ minimum: 0 }),
  etag: Type.String(),
  modified: Type.String({ format: "date-time" }),
};

/**
 * The five storage tools over one Storage. Every call's scope comes from the request's top-level
 * tenant_id and session_id (never from arguments), so a model cannot name another scope.
 */
export function storageTools(storage: Storage, mode: ScopeMode): Tool[] {
  const { limits } = storage;
  // JSON Schema counts characters, each at least one byte: this bounds utf8 and base64 content alike
  const maxContentLength = 4 * Math.ceil(limits.maxObjectBytes / 3);

  /** Run one operation in the caller's scope; a backend failure becomes a backend_failed result. */
  const inScope = async <T, S>(
    ctx: ToolContext,
    operation: (scope: string) => Promise<Outcome<T>>,
    render: (value: T) => ToolResultObject<S>,
  ): Promise<ToolResultObject<S>> => {
    const scope = scopePrefix(mode, ctx);
    if (!scope.ok) return errorResult(scope.error);
    let outcome: Outcome<T>;
    try {
      outcome = await operation(scope.value);
    } catch (error) {
      ctx.log.error({ err: error }, "storage backend failed");
      return errorResult({
        code: "backend_failed",
        message: `the storage backend failed (${(error as Error).name}); a write or delete may or may not have happened: check with storage_stat before retrying`,
      });
    }
    return outcome.ok ? render(outcome.value) : errorResult(outcome.error);
  };

  const write = defineTool({
    name: "storage_write",
    description:
      'Write a file to your storage, replacing it if it exists. The write is all or nothing. Pass if_match with the etag you last saw to write only if nobody changed the file since, or if_none_match "*" to write only if it does not exist yet.',
    input: Type.Object(
      {
        path: PathArg,
        content: Type.String({ maxLength: maxContentLength, description: "The file's whole content." }),
        encoding: EncodingArg('"utf8" for text (the default), "base64" for binary content.'),
        if_match: EtagArg("Write only if the file exists with this etag."),
        if_none_match: Type.Optional(
          Type.Literal("*", { description: 'Write only if the file does not exist: "*".' }),
        ),
      },
      strict,
    ),
    output: Type.Object({ ...Facts, created: Type.Boolean() }, strict),
    handler: (args, ctx) =>
      inScope(
        ctx,
        async (scope) => {
          const data = decodeContent(args.content, args.encoding ?? "utf8");
          if (!data.ok) return data;
          return storage.write(scope, args.path, data.value, {
            ...(args.if_match !== undefined && { ifMatch: args.if_match }),
            ifNoneMatch: args.if_none_match === "*",
          });
        },
        (written) => ({
          content: [
            { type: "text", text: `${written.created ? "Created" : "Replaced"} ${describe(written)}` },
          ],
          structured_content: { ...facts(written), created: written.created },
        }),
      ),
  });

  const read = defineTool({
    name: "storage_read",
    description: `Read a file from your storage: the whole file, or length bytes from offset. One read returns at most ${limits.maxReadBytes} bytes; read larger files in parts, continuing at next_offset.`,
    input: Type.Object(
      {
        path: PathArg,
        offset: Type.Optional(
          Type.Integer({ minimum: 0, description: "The first byte to read; 0 by default." }),
        ),
        length: Type.Optional(
          Type.Integer({ minimum: 0, maximum: limits.maxReadBytes, description: "How many bytes to read." }),
        ),
        encoding: EncodingArg('"utf8" to get text (the default), "base64" for binary files.'),
      },
      strict,
    ),
    output: Type.Object(
      {
        ...Facts,
        offset: Type.Integer({ minimum: 0 }),
        length: Type.Integer({ minimum: 0 }),
        encoding: StringEnum(["utf8", "base64"]),
        next_offset: Type.Optional(Type.Integer({ minimum: 0 })),
      },
      strict,
    ),
    handler: (args, ctx) =>
      inScope(
        ctx,
        async (scope) => {
          const read = await storage.read(scope, args.path, { offset: args.offset, length: args.length });
          if (!read.ok) return read;
          const { info, data, offset } = read.value;
          const end = offset + data.length;
          if (args.encoding === "base64") {
            return {
              ok: true,
              value: { info, offset, length: data.length, text: data.toString("base64"), end },
            };
          }
          const window = decodeTextWindow(data, offset === 0, end === info.size);
          if (!window.ok) return window;
          const start = offset + window.value.skipped;
          return {
            ok: true,
            value: {
              info,
              offset: start,
              length: window.value.length,
              text: window.value.text,
              end: start + window.value.length,
            },
          };
        },
        ({ info, offset, length, text, end }) => {
          const more = end < info.size;
          const part =
            offset === 0 && !more
              ? `${info.size} bytes`
              : `${length} bytes at offset ${offset} of ${info.size}`;
          const next = more ? `; continue with offset ${end}` : "";
          return {
            content: [
              { type: "text", text: `${info.path} (${part}, etag ${info.etag}${next}):` },
              { type: "text", text },
            ],
            structured_content: {
              ...facts(info),
              offset,
              length,
              encoding: args.encoding ?? "utf8",
              ...(more && { next_offset: end }),
            },
          };
        },
      ),
  });

  const stat = defineTool({
    name: "storage_stat",
    description:
      "Show a file's size, etag and modified time without reading it; an error if it does not exist.",
    input: Type.Object({ path: PathArg }, strict),
    output: Type.Object(Facts, strict),
    handler: (args, ctx) =>
      inScope(
        ctx,
        (scope) => storage.stat(scope, args.path),
        (info) => ({ content: [{ type: "text", text: describe(info) }], structured_content: facts(info) }),
      ),
  });

  const list = defineTool({
    name: "storage_list",
    description:
      'List the files in your storage whose paths start with prefix ("notes/" for a folder), in path order, a page at a time. Pass next_cursor back as cursor for the next page.',
    input: Type.Object(
      {
        prefix: Type.Optional(
          Type.String({
            maxLength: MAX_PATH_BYTES,
            description: 'Only paths starting with this; "" (all) by default.',
          }),
        ),
        cursor: Type.Optional(
          Type.String({ maxLength: 2048, description: "next_cursor from the previous page." }),
        ),
        limit: Type.Optional(
          Type.Integer({
            minimum: 1,
            maximum: limits.maxListLimit,
            default: 100,
            description: "Files per page.",
          }),
        ),
      },
      strict,
    ),
    output: Type.Object(
      {
        prefix: Type.String(),
        objects: Type.Array(Type.Object(Facts, strict)),
        next_cursor: Type.Optional(Type.String()),
      },
      strict,
    ),
    handler: (args, ctx) =>
      inScope(
        ctx,
        (scope) => storage.list(scope, args),
        ({ objects, nextCursor }) => {
          const prefix = args.prefix ?? "";
          const where = prefix === "" ? "" : ` under "${prefix}"`;
          const lines = objects.map(
            (info) => `${info.path}\t${info.size} bytes\t${info.modified.toISOString()}`,
          );
          const count = objects.length === 1 ? "1 file" : `${objects.length} files`;
          const head = objects.length === 0 ? `No files${where}.` : `${count}${where}:`;
          const tail = nextCursor ? [`More files follow: pass cursor "${nextCursor}".`] : [];
          return {
            content: [{ type: "text", text: [head, ...lines, ...tail].join("\n") }],
            structured_content: {
              prefix,
              objects: objects.map(facts),
              ...(nextCursor !== undefined && { next_cursor: nextCursor }),
            },
          };
        },
      ),
  });

  const remove = defineTool({
    name: "storage_delete",
    description:
      "Delete a file from your storage. Pass if_match with the etag you last saw to delete only if nobody changed the file since.",
    input: Type.Object(
      { path: PathArg, if_match: EtagArg("Delete only if the file has this etag.") },
      strict,
    ),
    output: Type.Object({ ...Facts, deleted: Type.Literal(true) }, strict),
    handler: (args, ctx) =>
      inScope(
        ctx,
        (scope) =>
          storage.delete(scope, args.path, args.if_match === undefined ? {} : { ifMatch: args.if_match }),
        (info) => ({
          content: [{ type: "text", text: `Deleted ${describe(info)}` }],
          structured_content: { ...facts(info), deleted: true as const },
        }),
      ),
  });

  return [write, read, stat, list, remove];
}
