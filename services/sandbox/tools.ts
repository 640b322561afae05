import { Type } from "@sinclair/typebox";
import { defineTool, type Tool, type ToolContext, ToolError } from "../../kit/index.js";
import { StringEnum } from "../../protocol/validation.js";
import type { Language, Limits } from "./config.js";
import { decodeContent } from "./decode-content.js";
import { SandboxError } from "./errors.js";
import type { JobStatus } from "./jobs.js";
import { type OutputProgress, ProgressBatcher } from "./progress-batcher.js";
import { describeEnd, execResult, jobText, runText } from "./result-text.js";
import type { CodeRequest, Sandbox } from "./sandbox.js";
import { displayPath, workspacePath } from "./workspace-path.js";
import type { Owner } from "./workspaces.js";

const strict = { additionalProperties: false } as const;
/** Output is sent as progress a few times a second, not once per write. */
const PROGRESS_INTERVAL_MS = 50;
/** The most characters of output in one progress event under a byte cap: each may JSON-escape to 6 bytes, plus the envelope. */
export const progressChars = (maxProgressBytes: number) => Math.floor((maxProgressBytes - 64) / 6);
/** Below Brain's default 30 s headers timeout, as sandbox_status answers with JSON. */
const MAX_STATUS_WAIT_SECONDS = 20;
/** The binding timeout suggested for the tools that do not run code to its end: they answer in moments. */
const QUICK_TOOL_SECONDS = 60;
/** What a call adds to its run's own limit: sandbox setup and the answer. */
const CALL_MARGIN_SECONDS = 30;

const ExecOutput = Type.Object(
  {
    exit_code: Type.Union([Type.Integer(), Type.Null()]),
    stdout: Type.String(),
    stderr: Type.String(),
    truncated: Type.Boolean(),
    duration_ms: Type.Integer(),
    timed_out: Type.Boolean(),
    out_of_memory: Type.Boolean(),
  },
  strict,
);

const JobOutput = Type.Object(
  {
    job_id: Type.String(),
    state: StringEnum(["running", "exited", "timed_out", "cancelled", "failed"]),
    language: Type.String(),
    started_at: Type.String(),
    timeout_seconds: Type.Number(),
    exit_code: Type.Union([Type.Integer(), Type.Null()]),
    stdout: Type.String(),
    stderr: Type.String(),
    truncated: Type.Boolean(),
    duration_ms: Type.Integer(),
    out_of_memory: Type.Boolean(),
  },
  strict,
);

const owner = (ctx: ToolContext): Owner => ({ tenantId: ctx.tenant_id, sessionId: ctx.session_id });

/** A SandboxError as the error result the model reads, with its code in structured_content. */
async function guarded<T>(work: () => T | Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (error instanceof SandboxError) {
      throw new ToolError(error.message, { error: { code: error.code, message: error.message } });
    }
    throw error;
  }
}

/** The sandbox's seven tools, their schemas shaped by the config (languages, limits). */
export function sandboxTools(sandbox: Sandbox, languages: readonly Language[], limits: Limits): Tool[] {
  const codeFields = {
    language: StringEnum(languages, { description: `The language of code: ${languages.join(", ")}.` }),
    code: Type.String({ minLength: 1, maxLength: limits.max_code_bytes, description: "The program to run." }),
    stdin: Type.Optional(
      Type.String({
        maxLength: limits.max_stdin_bytes,
        description: "Text given to the program as its stdin.",
      }),
    ),
  };
  const codeRequest = (
    args: {
      language: Language;
      code: string;
      stdin?: string | undefined;
      timeout_seconds?: number | undefined;
    },
    defaultSeconds: number,
  ): CodeRequest => ({
    language: args.language,
    code: args.code,
    ...(args.stdin !== undefined && { stdin: args.stdin }),
    timeoutMs: Math.round((args.timeout_seconds ?? defaultSeconds) * 1000),
  });
  const jobResult = (status: JobStatus) => ({
    content: [
      {
        type: "text" as const,
        text: jobText(
          status,
          {
            timeoutMs: status.timeout_seconds * 1000,
            cpuSeconds: limits.cpu_seconds,
            sandboxMemoryBytes: limits.sandbox_memory_bytes,
          },
          limits.max_output_bytes,
        ),
      },
    ],
    structured_content: status,
  });

  const exec = defineTool({
    name: "sandbox_exec",
    description:
      "Run code in an isolated sandbox and return its exit code and output. The working directory is the " +
      "session's workspace (/workspace), whose files persist between calls; there is no network. " +
      "Output streams as progress while it runs. For work longer than a few minutes use sandbox_start.",
    input: Type.Object(
      {
        ...codeFields,
        timeout_seconds: Type.Optional(
          Type.Number({
            exclusiveMinimum: 0,
            maximum: limits.max_timeout_seconds,
            description: `Wall-clock limit; default ${limits.timeout_seconds}. The program and everything it started are killed at it.`,
          }),
        ),
      },
      strict,
    ),
    output: ExecOutput,
    // headers go out at once: a quiet program may run past Brain's headers timeout
    streaming: true,
    timeoutSeconds: limits.max_timeout_seconds + CALL_MARGIN_SECONDS,
    handler: (args, ctx) =>
      guarded(async () => {
        const request = codeRequest(args, limits.timeout_seconds);
        const batcher = new ProgressBatcher(
          (progress: OutputProgress) => ctx.progress(progress),
          PROGRESS_INTERVAL_MS,
          progressChars(limits.max_progress_bytes),
        );
        const outcome = await sandbox.exec(owner(ctx), request, {
          signal: ctx.signal,
          onOutput: (stream, text) => batcher.push(stream, text),
        });
        batcher.flush();
        const result = execResult(outcome);
        const end = describeEnd({
          exitCode: result.exit_code,
          timedOut: result.timed_out,
          durationMs: result.duration_ms,
          timeoutMs: request.timeoutMs,
          cpuSeconds: limits.cpu_seconds,
          outOfMemory: result.out_of_memory,
          sandboxMemoryBytes: limits.sandbox_memory_bytes,
        });
        return {
          content: [{ type: "text" as const, text: runText(result, end, limits.max_output_bytes) }],
          structured_content: result,
        };
      }),
  });

  const start = defineTool({
    name: "sandbox_start",
    description:
      "Start code as a background job in the session's sandbox and return its job_id at once. " +
      "Follow it with sandbox_status and stop it with sandbox_cancel.",
    input: Type.Object(
      {
        ...codeFields,
        timeout_seconds: Type.Optional(
          Type.Number({
            exclusiveMinimum: 0,
            maximum: limits.job_timeout_seconds,
            description: `Wall-clock limit of the job; default and most ${limits.job_timeout_seconds}.`,
          }),
        ),
      },
      strict,
    ),
    output: JobOutput,
    timeoutSeconds: QUICK_TOOL_SECONDS,
    handler: (args, ctx) =>
      guarded(() => {
        const request = codeRequest(args, limits.job_timeout_seconds);
        return jobResult(sandbox.start(owner(ctx), request));
      }),
  });

  const status = defineTool({
    name: "sandbox_status",
    description:
      "The state of a job from sandbox_start (running, exited, timed_out, cancelled), its output so far and " +
      "its exit code. With wait_seconds, wait up to that long for the job to end first.",
    input: Type.Object(
      {
        job_id: Type.String({ minLength: 1, maxLength: 128 }),
        wait_seconds: Type.Optional(Type.Number({ minimum: 0, maximum: MAX_STATUS_WAIT_SECONDS })),
      },
      strict,
    ),
    output: JobOutput,
    timeoutSeconds: QUICK_TOOL_SECONDS,
    handler: (args, ctx) =>
      guarded(async () => {
        const waitMs = Math.round((args.wait_seconds ?? 0) * 1000);
        const job = await sandbox.status(owner(ctx), args.job_id, waitMs, ctx.signal);
        return jobResult(job);
      }),
  });

  const cancel = defineTool({
    name: "sandbox_cancel",
    description: "Stop a job from sandbox_start and every process it started; returns its final status.",
    input: Type.Object({ job_id: Type.String({ minLength: 1, maxLength: 128 }) }, strict),
    output: JobOutput,
    timeoutSeconds: QUICK_TOOL_SECONDS,
    handler: (args, ctx) => guarded(async () => jobResult(await sandbox.cancel(owner(ctx), args.job_id))),
  });

  const writeFile = defineTool({
    name: "sandbox_write_file",
    description:
      "Create or replace a file in the session's workspace (parent directories are created). " +
      "The path is relative to the workspace.",
    input: Type.Object(
      {
        path: Type.String({ minLength: 1, maxLength: 4096 }),
        content: Type.String({ description: "The file's content: text, or base64 with encoding base64." }),
        encoding: Type.Optional(
          Type.Union([Type.Literal("utf8"), Type.Literal("base64")], { default: "utf8" }),
        ),
      },
      strict,
    ),
    output: Type.Object({ path: Type.String(), size: Type.Integer() }, strict),
    timeoutSeconds: QUICK_TOOL_SECONDS,
    handler: (args, ctx) =>
      guarded(() => {
        const data = decodeContent(args.content, args.encoding ?? "utf8");
        sandbox.writeFile(owner(ctx), args.path, data);
        const path = displayPath(workspacePath(args.path));
        return {
          content: [{ type: "text" as const, text: `wrote ${data.length} bytes to ${path}` }],
          structured_content: { path, size: data.length },
        };
      }),
  });

  const readFile = defineTool({
    name: "sandbox_read_file",
    description: `Read a file of the session's workspace: its text, or base64 when it is not UTF-8; at most ${limits.max_read_bytes} bytes.`,
    input: Type.Object({ path: Type.String({ minLength: 1, maxLength: 4096 }) }, strict),
    output: Type.Object(
      {
        path: Type.String(),
        size: Type.Integer(),
        encoding: Type.Union([Type.Literal("utf8"), Type.Literal("base64")]),
        content: Type.String(),
        truncated: Type.Boolean(),
      },
      strict,
    ),
    timeoutSeconds: QUICK_TOOL_SECONDS,
    handler: (args, ctx) =>
      guarded(() => {
        const { data, size } = sandbox.readFile(owner(ctx), args.path);
        const truncated = data.length < size;
        const text = utf8(data, truncated);
        const path = displayPath(workspacePath(args.path));
        const note = truncated ? `\n[truncated: the first ${data.length} of ${size} bytes]` : "";
        return {
          content: [
            {
              type: "text" as const,
              text:
                text === undefined
                  ? `${path} is binary (${size} bytes); base64 in structured content`
                  : text + note,
            },
          ],
          structured_content: {
            path,
            size,
            encoding: text === undefined ? ("base64" as const) : ("utf8" as const),
            content: text ?? data.toString("base64"),
            truncated,
          },
        };
      }),
  });

  const list = defineTool({
    name: "sandbox_list",
    description:
      "List the files of the session's workspace (or of a directory in it): path, type, size. Symlinks are listed, not followed.",
    input: Type.Object(
      {
        path: Type.Optional(Type.String({ maxLength: 4096, default: "." })),
        recursive: Type.Optional(Type.Boolean({ default: false })),
      },
      strict,
    ),
    output: Type.Object(
      {
        entries: Type.Array(
          Type.Object(
            {
              path: Type.String(),
              type: Type.String(),
              size: Type.Integer(),
              target: Type.Optional(Type.String()),
            },
            strict,
          ),
        ),
        truncated: Type.Boolean(),
      },
      strict,
    ),
    timeoutSeconds: QUICK_TOOL_SECONDS,
    handler: (args, ctx) =>
      guarded(() => {
        const listed = sandbox.list(owner(ctx), args.path ?? ".", args.recursive ?? false);
        const lines = listed.entries.map(
          (entry) =>
            `${entry.type === "directory" ? `${entry.path}/` : entry.path}${entry.type === "file" ? ` (${entry.size} bytes)` : ""}${entry.target !== undefined ? ` -> ${entry.target}` : ""}`,
        );
        if (lines.length === 0) lines.push("(empty)");
        if (listed.truncated) lines.push(`[truncated at ${limits.max_list_entries} entries]`);
        return { content: [{ type: "text" as const, text: lines.join("\n") }], structured_content: listed };
      }),
  });

  return [exec, start, status, cancel, writeFile, readFile, list];
}

/** The text of `data` when it is valid UTF-8 (in a truncated read, a character cut at the end allowed), else undefined. */
function utf8(data: Buffer, truncated: boolean): string | undefined {
  for (let cut = 0; cut < (truncated ? 4 : 1) && cut <= data.length; cut++) {
    try {
      return new TextDecoder("utf-8", { fatal: true }).decode(data.subarray(0, data.length - cut));
    } catch {
      // a multi-byte character cut at the end: try without its bytes
    }
  }
  return undefined;
}
