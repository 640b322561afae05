import { createInterface } from "node:readline";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import {
  StreamableHTTPClientTransport,
  StreamableHTTPError,
} from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import {
  type CallToolResult,
  ErrorCode,
  McpError,
  type Tool as McpTool,
  type Progress,
} from "@modelcontextprotocol/sdk/types.js";
import type { Logger } from "pino";
import type { ServerConfig } from "./config.js";

export type { McpTool };

/** The server cannot take calls now (it exited and is restarting): nothing was sent. */
export class ServerUnavailable extends Error {}

/** The connection to the server was lost while the call was out: it may or may not have run. */
export class ConnectionLost extends Error {}

export interface ConnectionOptions {
  logger: Logger;
  restart: { initialMs: number; maxMs: number };
  startupTimeoutMs: number;
  /** Called with the server's tools whenever they were listed again: after a restart, on list_changed. */
  onTools?: (tools: McpTool[]) => void;
}

export interface CallOptions {
  signal: AbortSignal;
  onProgress: (progress: Progress) => void;
}

const STDERR_TAIL = 10;
const MAX_STDERR_LINE = 2000;
const CLIENT_INFO = { name: "brain-mcp-bridge", version: "1.0.0" };

/**
 * One MCP client session with one server: a child process over stdio, or a Streamable HTTP
 * session. A stdio server that exits is restarted after a backoff that doubles to
 * `restart.maxMs` (and starts over once a server stayed up that long); meanwhile calls fail with
 * ServerUnavailable, and calls that were out when it died with ConnectionLost.
 */
export class McpConnection {
  #client: Client | undefined;
  #tools: McpTool[] = [];
  #unavailable: string | undefined = "it has not started yet";
  #delayMs: number;
  #startedAt = 0;
  #timer: NodeJS.Timeout | undefined;
  #closed = false;
  #inFlight = 0;
  #lastUsed = Date.now();
  #stderr: string[] = [];
  #pid: number | undefined;

  constructor(
    readonly server: ServerConfig,
    private readonly options: ConnectionOptions,
  ) {
    this.#delayMs = options.restart.initialMs;
  }

  get tools(): readonly McpTool[] {
    return this.#tools;
  }

  /** The stdio server's process id while it runs. */
  get pid(): number | undefined {
    return this.#pid;
  }

  /** Calls out now, and when the last one ended: an isolated server's idle clock. */
  get busy(): boolean {
    return this.#inFlight > 0;
  }

  get lastUsed(): number {
    return this.#lastUsed;
  }

  /** Start the server and list its tools; throws, saying why, when it does not start in time. */
  async start(): Promise<void> {
    // busy while it starts: an idle sweep must not stop a server before its first call
    this.#inFlight++;
    try {
      await this.#connect();
    } finally {
      this.#inFlight--;
      this.#lastUsed = Date.now();
    }
  }

  async call(name: string, args: Record<string, unknown>, options: CallOptions): Promise<CallToolResult> {
    this.#inFlight++;
    this.#lastUsed = Date.now();
    try {
      return await this.#callOnce(name, args, options, true);
    } finally {
      this.#inFlight--;
      this.#lastUsed = Date.now();
    }
  }

  async close(): Promise<void> {
    this.#closed = true;
    clearTimeout(this.#timer);
    const client = this.#client;
    this.#client = undefined;
    this.#unavailable = "the bridge is stopping";
    await client?.close().catch(() => undefined);
  }

  async #callOnce(
    name: string,
    args: Record<string, unknown>,
    options: CallOptions,
    mayRetry: boolean,
  ): Promise<CallToolResult> {
    const client = this.#client;
    if (!client) throw new ServerUnavailable(`the MCP server "${this.server.name}" ${this.#unavailable}`);
    try {
      return (await client.callTool({ name, arguments: args }, undefined, {
        signal: options.signal,
        onprogress: options.onProgress,
        timeout: this.server.timeoutMs,
        resetTimeoutOnProgress: true,
      })) as CallToolResult;
    } catch (error) {
      if (client !== this.#client && error instanceof McpError && error.code === ErrorCode.ConnectionClosed) {
        throw new ConnectionLost(
          `the MCP server "${this.server.name}" ${this.#unavailable ?? "went away"} while the call was out`,
        );
      }
      // a Streamable HTTP server that forgot the session (it restarted) never saw the call: a new
      // session is what the MCP specification asks for, and the call may go once more
      if (mayRetry && error instanceof StreamableHTTPError && error.code === 404) {
        this.options.logger.warn(
          { server: this.server.name },
          "the MCP server lost the session: starting a new one",
        );
        await this.#reconnect();
        return this.#callOnce(name, args, options, false);
      }
      throw error;
    }
  }

  async #reconnect(): Promise<void> {
    const old = this.#client;
    this.#client = undefined;
    await old?.close().catch(() => undefined);
    await this.#connect();
  }

  async #connect(): Promise<void> {
    const transport = this.#transport();
    const client = new Client(CLIENT_INFO, {
      capabilities: {},
      listChanged: { tools: { autoRefresh: false, onChanged: () => this.#relist(client) } },
    });
    const timeout = this.options.startupTimeoutMs;
    try {
      await client.connect(transport, { timeout });
      this.#tools = await listAllTools(client, timeout);
    } catch (error) {
      await client.close().catch(() => undefined);
      throw new Error(
        `the MCP server "${this.server.name}" did not start: ${describe(error)}${this.#stderrTail()}`,
      );
    }
    if (this.#closed) {
      await client.close().catch(() => undefined);
      return;
    }
    this.#client = client;
    this.#unavailable = undefined;
    this.#startedAt = Date.now();
    this.#pid = transport instanceof StdioClientTransport ? (transport.pid ?? undefined) : undefined;
    client.onclose = () => this.#lost(client);
    this.options.logger.info(
      { server: this.server.name, pid: this.#pid, tools: this.#tools.length },
      "mcp server connected",
    );
    this.options.onTools?.(this.#tools);
  }

  #transport(): Transport {
    const { server } = this;
    if (server.kind === "http") {
      const headers = Object.fromEntries(
        Object.entries(server.headers).map(([name, value]) => [name, value.reveal()]),
      );
      return new StreamableHTTPClientTransport(new URL(server.url), { requestInit: { headers } });
    }
    const transport = new StdioClientTransport({
      command: server.command,
      args: server.args,
      env: Object.fromEntries(Object.entries(server.env).map(([name, value]) => [name, value.reveal()])),
      cwd: server.cwd,
      stderr: "pipe",
      maxBufferSize: server.maxMessageBytes,
    });
    this.#stderr = [];
    const stderr = transport.stderr;
    if (stderr) {
      createInterface({ input: stderr as unknown as NodeJS.ReadableStream }).on("line", (line) => {
        const kept = line.slice(0, MAX_STDERR_LINE);
        this.#stderr.push(kept);
        if (this.#stderr.length > STDERR_TAIL) this.#stderr.shift();
        this.options.logger.info({ server: server.name, stderr: kept }, "mcp server stderr");
      });
    }
    return transport;
  }

  #stderrTail(): string {
    return this.#stderr.length === 0 ? "" : `; its stderr ended with:\n${this.#stderr.join("\n")}`;
  }

  async #relist(client: Client): Promise<void> {
    if (client !== this.#client) return;
    try {
      this.#tools = await listAllTools(client, this.options.startupTimeoutMs);
      this.options.logger.info(
        { server: this.server.name, tools: this.#tools.length },
        "mcp server's tools changed",
      );
      this.options.onTools?.(this.#tools);
    } catch (error) {
      this.options.logger.warn({ server: this.server.name, err: error }, "could not list the changed tools");
    }
  }

  /** The server went away by itself: restart it after the backoff. */
  #lost(client: Client): void {
    if (client !== this.#client || this.#closed) return;
    this.#client = undefined;
    this.#pid = undefined;
    if (Date.now() - this.#startedAt >= this.options.restart.maxMs)
      this.#delayMs = this.options.restart.initialMs;
    this.#scheduleRestart("exited");
  }

  #scheduleRestart(why: string): void {
    const delay = this.#delayMs;
    this.#delayMs = Math.min(this.options.restart.maxMs, delay * 2);
    this.#unavailable = `${why} and is restarting (next attempt in ${(delay / 1000).toFixed(1)} s); try again shortly`;
    this.options.logger.warn(
      { server: this.server.name, restart_in_ms: delay, stderr: this.#stderr.at(-1) },
      "mcp server went away: restarting",
    );
    this.#timer = setTimeout(() => {
      this.#connect().catch((error: unknown) => {
        if (this.#closed) return;
        this.options.logger.warn(
          { server: this.server.name, err: describe(error) },
          "mcp server restart failed",
        );
        this.#scheduleRestart("failed to restart");
      });
    }, delay);
    this.#timer.unref();
  }
}

/** Every page of tools/list. */
async function listAllTools(client: Client, timeout: number): Promise<McpTool[]> {
  const tools: McpTool[] = [];
  let cursor: string | undefined;
  // a server that hands out cursors forever is cut off: no real server has 1000 pages of tools
  for (let page = 0; page < 1000; page++) {
    const listed = await client.listTools(cursor === undefined ? {} : { cursor }, { timeout });
    tools.push(...listed.tools);
    cursor = listed.nextCursor;
    if (cursor === undefined) break;
  }
  return tools;
}

export function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
