import { createInterface } from "node:readline";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPError } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
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
import { END_SESSION_TIMEOUT_MS, HttpTransport } from "./http-transport.js";

export type { McpTool };

/** The server cannot take calls now (it exited and is restarting): nothing was sent. */
export class ServerUnavailable extends Error {}

/** The connection to the server was lost while the call was out: it may or may not have run. */
export class ConnectionLost extends Error {}

/** The server did not start, or its first tools/list was unfit; `reason` says why without naming it. */
class StartFailed extends Error {
  constructor(
    server: string,
    readonly reason: string,
    stderrTail: string,
  ) {
    super(`the MCP server "${server}" did not start: ${reason}${stderrTail}`);
  }
}

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
 * session. A stdio server that exits, or an HTTP server that forgot the session and would not
 * give a new one, is restarted after a backoff that doubles to `restart.maxMs` (and starts over
 * once a server stayed up that long); meanwhile calls fail with ServerUnavailable, and calls that
 * were out when it died with ConnectionLost. Calls that come while a forgotten session is being
 * replaced wait for the new one.
 */
export class McpConnection {
  #client: Client | undefined;
  #tools: McpTool[] = [];
  /** Why there is no client: set whenever #client is not. */
  #unavailable: string | undefined = "it has not started yet";
  /** The new session replacing one the server forgot, shared by every call that waits for it. */
  #reconnecting: Promise<void> | undefined;
  #delayMs: number;
  #startedAt = 0;
  #timer: NodeJS.Timeout | undefined;
  /** Aborted by close(): a start under way stops at once, and leaves nothing behind. */
  readonly #closing = new AbortController();
  /** Every start under way (the first, a restart, a new session), which close() waits out. */
  readonly #starting = new Set<Promise<void>>();
  /** Forgotten sessions waiting for their calls' answers before they close: close() closes them at once. */
  readonly #retiring = new Set<Client>();
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

  /** Stop the server; once this resolves, nothing of the connection is left running or open. */
  async close(): Promise<void> {
    this.#closing.abort();
    clearTimeout(this.#timer);
    const client = this.#client;
    this.#client = undefined;
    this.#unavailable = "the bridge is stopping";
    await Promise.allSettled([
      ...(client ? [shut(client)] : []),
      // the server forgot these sessions: no DELETE, and their calls still out end as lost
      ...[...this.#retiring].map((stale) => stale.close()),
      ...this.#starting,
    ]);
  }

  async #callOnce(
    name: string,
    args: Record<string, unknown>,
    options: CallOptions,
    mayRetry: boolean,
  ): Promise<CallToolResult> {
    const client = this.#client ?? (await this.#afterReconnect(options.signal));
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
        this.#reconnect(client);
        return this.#callOnce(name, args, options, false);
      }
      throw error;
    }
  }

  /**
   * Start a new session in place of `stale`, which the server forgot; once, however many calls
   * found out. One that does not start goes the way of a server that exited: restarted after the backoff.
   */
  #reconnect(stale: Client): void {
    // another call found out first: the new session is on its way, or up already
    if (stale !== this.#client) return;
    this.#drop("lost its session and is starting a new one; try again shortly");
    this.#retire(stale);
    const reconnecting: Promise<void> = this.#connect()
      .catch((error: unknown) => {
        if (this.#closing.signal.aborted) return;
        this.options.logger.warn(
          { server: this.server.name, err: describe(error) },
          "mcp server did not give a new session",
        );
        this.#scheduleRestart(`lost its session and could not start a new one (${reasonOf(error)})`);
      })
      .finally(() => {
        if (this.#reconnecting === reconnecting) this.#reconnecting = undefined;
      });
    this.#reconnecting = reconnecting;
  }

  /**
   * Close a forgotten session once every call sent on it has had its answer (a 404, so it goes
   * again on the new session); a call the server had taken before it forgot ends as lost.
   */
  #retire(stale: Client): void {
    this.#retiring.add(stale);
    const transport = stale.transport;
    const answered =
      transport instanceof HttpTransport
        ? transport.answered(this.options.startupTimeoutMs)
        : Promise.resolve();
    answered
      .then(() => stale.close())
      .catch(() => undefined)
      .finally(() => this.#retiring.delete(stale));
  }

  /**
   * The client for a call that found none: the new session, when one is being started, waited for
   * as long as the call may (a start ends within startup_timeout_seconds); otherwise
   * ServerUnavailable saying why.
   */
  async #afterReconnect(signal: AbortSignal): Promise<Client> {
    const reconnecting = this.#reconnecting;
    // a call that stops waiting finds no client, and says why
    if (reconnecting) await until(signal, reconnecting).catch(() => undefined);
    const client = this.#client;
    if (!client) throw new ServerUnavailable(`the MCP server "${this.server.name}" ${this.#unavailable}`);
    return client;
  }

  async #connect(): Promise<void> {
    const starting = this.#start();
    this.#starting.add(starting);
    try {
      await starting;
    } finally {
      this.#starting.delete(starting);
    }
  }

  async #start(): Promise<void> {
    const transport = this.#transport();
    const client = new Client(CLIENT_INFO, {
      capabilities: {},
      listChanged: { tools: { autoRefresh: false, onChanged: () => this.#relist(client) } },
    });
    const timeout = this.options.startupTimeoutMs;
    // the whole start is bounded, not only its requests: the SDK sends the initialized
    // notification with no time limit (a server that never answers its POST held a start ~5 min)
    const timedOut = AbortSignal.timeout(timeout);
    let tools: McpTool[];
    try {
      tools = await until(
        AbortSignal.any([this.#closing.signal, timedOut]),
        client.connect(transport, { timeout }).then(() => listAllTools(client, timeout)),
      );
    } catch (error) {
      // the child process, or the HTTP session, goes too: nothing is left running for a client never used
      await shut(client);
      const reason = this.#closing.signal.aborted
        ? "the bridge is stopping"
        : timedOut.aborted
          ? `it did not finish starting within startup_timeout_seconds (${timeout / 1000} s)`
          : describe(error);
      throw new StartFailed(this.server.name, reason, this.#stderrTail());
    }
    if (this.#closing.signal.aborted) {
      await shut(client);
      return;
    }
    this.#tools = tools;
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
      return new HttpTransport(new URL(server.url), { requestInit: { headers } });
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
    if (client !== this.#client || this.#closing.signal.aborted) return;
    this.#drop("exited");
    this.#scheduleRestart("exited");
  }

  /** Stop using the client: calls get `why` until there is a new one. */
  #drop(why: string): void {
    this.#client = undefined;
    this.#pid = undefined;
    this.#unavailable = why;
    // a server that stayed up a while starts over from the short wait
    if (Date.now() - this.#startedAt >= this.options.restart.maxMs)
      this.#delayMs = this.options.restart.initialMs;
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
        if (this.#closing.signal.aborted) return;
        this.options.logger.warn(
          { server: this.server.name, err: describe(error) },
          "mcp server restart failed",
        );
        this.#scheduleRestart(`failed to restart (${reasonOf(error)})`);
      });
    }, delay);
    this.#timer.unref();
  }
}

/**
 * Every page of tools/list. A name listed twice is the server's mistake, refused here: calls to it
 * could reach either tool, and Brain could serve it under one name only.
 */
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
  const names = new Set<string>();
  for (const { name } of tools) {
    if (names.has(name)) throw new Error(`it lists the tool "${name}" twice`);
    names.add(name);
  }
  return tools;
}

/** Close a client, ending its HTTP session first as the specification asks (bounded: a courtesy). */
async function shut(client: Client): Promise<void> {
  const transport = client.transport;
  if (transport instanceof HttpTransport) await transport.endSession(END_SESSION_TIMEOUT_MS);
  await client.close().catch(() => undefined);
}

/** Settles as `work` does, unless `signal` is aborted first: then rejects with its reason. */
function until<T>(signal: AbortSignal, work: Promise<T>): Promise<T> {
  return new Promise((resolve, reject) => {
    const stop = () => reject(signal.reason);
    if (signal.aborted) stop();
    signal.addEventListener("abort", stop, { once: true });
    work.then(resolve, reject).finally(() => signal.removeEventListener("abort", stop));
  });
}

const reasonOf = (error: unknown) => (error instanceof StartFailed ? error.reason : describe(error));

export function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
