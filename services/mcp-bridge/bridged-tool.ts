import { ErrorCode, McpError } from "@modelcontextprotocol/sdk/types.js";
import { Type } from "@sinclair/typebox";
import type { Logger } from "pino";
import { defineTool, errorResult, OutcomeUnknown, type Tool, type ToolContext } from "../../kit/index.js";
import { ConnectionLost, describe, type McpTool, ServerUnavailable } from "./connection.js";
import { brainResult } from "./mcp-result.js";
import type { ServerPool } from "./server-pool.js";

const DRAFT_07 = "http://json-schema.org/draft-07/schema#";

/**
 * The Brain tool `name` that forwards each call to `tool` on the pool's server: progress as it
 * arrives, Brain's disconnect as `notifications/cancelled`, the result field by field. Undefined,
 * with a warning, for a tool Brain could not bind (its input schema compiles under no draft).
 */
export function bridgedTool(name: string, tool: McpTool, pool: ServerPool, logger: Logger): Tool | undefined {
  const server = pool.server.name;
  if (tool.execution?.taskSupport === "required") {
    logger.warn(
      { server, tool: tool.name },
      "not served: the tool runs only as an MCP task, which the bridge does not speak",
    );
    return undefined;
  }
  const description = tool.description?.trim() || tool.title || tool.annotations?.title || tool.name;
  const definition = {
    name,
    description,
    streaming: true, // headers at once: an MCP call may outlast Brain's headers timeout without saying anything
    timeoutSeconds: pool.server.timeoutMs / 1000,
    handler: (args: Record<string, unknown>, ctx: ToolContext) => forward(tool.name, args, ctx, pool),
  };
  const define = (input: Record<string, unknown>, output: Record<string, unknown> | undefined) => {
    try {
      return defineTool({
        ...definition,
        input: Type.Unsafe<Record<string, unknown>>(input),
        ...(output && { output: Type.Unsafe<Record<string, unknown>>(output) }),
      });
    } catch {
      return undefined;
    }
  };
  const outputs = tool.outputSchema ? dialects(tool.outputSchema) : [];
  for (const input of dialects(tool.inputSchema)) {
    for (const output of outputs) {
      const defined = define(input, output);
      if (defined) return defined;
    }
    const defined = define(input, undefined);
    if (defined) {
      if (tool.outputSchema) {
        logger.warn(
          { server, tool: tool.name },
          "served without its output schema, which compiles under neither draft",
        );
      }
      return defined;
    }
  }
  logger.warn(
    { server, tool: tool.name },
    "not served: its input schema compiles under neither draft 2020-12 nor draft-07",
  );
  return undefined;
}

/**
 * The ways to read a schema: as it says, and, when it names no dialect, as draft-07 too (Brain
 * reads a schema without `$schema` as 2020-12, which refuses draft-07's array form of `items`).
 */
function dialects(schema: Record<string, unknown>): Record<string, unknown>[] {
  return typeof schema.$schema === "string" ? [schema] : [schema, { ...schema, $schema: DRAFT_07 }];
}

async function forward(mcpName: string, args: Record<string, unknown>, ctx: ToolContext, pool: ServerPool) {
  const server = pool.server.name;
  try {
    const connection = await pool.connectionFor(ctx);
    const result = await connection.call(mcpName, args, {
      signal: ctx.signal,
      onProgress: ({ progress, total, message }) => {
        try {
          ctx.progress({
            progress,
            ...(total !== undefined && { total }),
            ...(message !== undefined && { message }),
          });
        } catch (error) {
          ctx.log.warn({ err: describe(error) }, "progress not forwarded");
        }
      },
    });
    return brainResult(result);
  } catch (error) {
    if (error instanceof ConnectionLost) throw new OutcomeUnknown(error.message);
    if (error instanceof ServerUnavailable) return errorResult(error.message);
    if (error instanceof McpError && error.code === ErrorCode.RequestTimeout) {
      return errorResult(
        `The MCP server "${server}" did not answer ${mcpName} within ${pool.server.timeoutMs / 1000} s of its last progress, so the call was cancelled; it may have done part of the work.`,
      );
    }
    if (error instanceof McpError) {
      // the SDK puts "MCP error CODE: " before the server's own message
      const message = error.message.replace(/^MCP error -?\d+: /, "");
      return errorResult(
        `The MCP server "${server}" answered ${mcpName} with the JSON-RPC error ${error.code}: ${message}`,
      );
    }
    return errorResult(`Calling ${mcpName} on the MCP server "${server}" failed: ${describe(error)}`);
  }
}
