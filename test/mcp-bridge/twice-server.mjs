// An MCP server over stdio whose one tool is listed twice from its second start on, as a server
// broken by an upgrade might be. Each start appends its pid to ./pids, so a test sees every process.
import { appendFileSync, existsSync } from "node:fs";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { CallToolRequestSchema, ListToolsRequestSchema } from "@modelcontextprotocol/sdk/types.js";

const again = existsSync("pids");
appendFileSync("pids", `${process.pid}\n`);
const tool = { name: "same", description: "Says hello.", inputSchema: { type: "object" } };
const server = new Server({ name: "twice", version: "1.0.0" }, { capabilities: { tools: {} } });
server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: again ? [tool, tool] : [tool] }));
server.setRequestHandler(CallToolRequestSchema, () => ({ content: [{ type: "text", text: "hello" }] }));
await server.connect(new StdioServerTransport());
