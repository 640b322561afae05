import type { Logger } from "pino";
import type { ServerConfig } from "./config.js";
import {
  type ConnectionOptions,
  describe,
  McpConnection,
  type McpTool,
  ServerUnavailable,
} from "./connection.js";

export interface Identity {
  tenant_id: string;
  session_id: string;
}

/**
 * The connections to one configured server. A shared server has one, which lists the tools and
 * takes every call. An isolated one (per tenant, or per session) has that one for its tools only,
 * and starts a connection of its own for each tenant or session on its first call, stopped after
 * `idle_seconds` unused; at most `max_instances` at once, making room by stopping the least
 * recently used idle one.
 */
export class ServerPool {
  readonly lister: McpConnection;
  readonly #instances = new Map<string, { connection: McpConnection; started: Promise<void> }>();
  readonly #sweep: NodeJS.Timeout | undefined;

  constructor(
    readonly server: ServerConfig,
    private readonly options: Omit<ConnectionOptions, "onTools"> & { logger: Logger },
    onTools: (tools: McpTool[]) => void,
  ) {
    this.lister = new McpConnection(server, { ...options, onTools });
    if (server.isolation !== "shared") {
      this.#sweep = setInterval(() => this.#stopIdle(), Math.min(server.idleMs, 30_000));
      this.#sweep.unref();
    }
  }

  start(): Promise<void> {
    return this.lister.start();
  }

  /** The connection that takes this caller's calls, started when it is the caller's first. */
  async connectionFor(identity: Identity): Promise<McpConnection> {
    if (this.server.isolation === "shared") return this.lister;
    const key =
      this.server.isolation === "tenant"
        ? identity.tenant_id
        : `${identity.tenant_id}\u0000${identity.session_id}`;
    let instance = this.#instances.get(key);
    if (!instance) {
      this.#makeRoom();
      const connection = new McpConnection(this.server, this.options);
      const started = connection.start().catch((error: unknown) => {
        this.#instances.delete(key);
        throw new ServerUnavailable(describe(error));
      });
      instance = { connection, started };
      this.#instances.set(key, instance);
      this.options.logger.info(
        {
          server: this.server.name,
          isolation: this.server.isolation,
          tenant_id: identity.tenant_id,
          session_id: identity.session_id,
        },
        "starting an isolated mcp server",
      );
    }
    await instance.started;
    return instance.connection;
  }

  /** How many isolated connections run now. */
  get instances(): number {
    return this.#instances.size;
  }

  async close(): Promise<void> {
    clearInterval(this.#sweep);
    const all = [this.lister, ...[...this.#instances.values()].map((instance) => instance.connection)];
    this.#instances.clear();
    await Promise.all(all.map((connection) => connection.close()));
  }

  #makeRoom(): void {
    if (this.#instances.size < this.server.maxInstances) return;
    let oldest: [string, McpConnection] | undefined;
    for (const [key, { connection }] of this.#instances) {
      if (!connection.busy && (!oldest || connection.lastUsed < oldest[1].lastUsed))
        oldest = [key, connection];
    }
    if (!oldest) {
      throw new ServerUnavailable(
        `every one of the ${this.server.maxInstances} instances of the MCP server "${this.server.name}" is busy; try again shortly`,
      );
    }
    this.#stop(oldest[0], oldest[1], "to make room");
  }

  #stopIdle(): void {
    const now = Date.now();
    for (const [key, { connection }] of this.#instances) {
      if (!connection.busy && now - connection.lastUsed >= this.server.idleMs)
        this.#stop(key, connection, "idle");
    }
  }

  #stop(key: string, connection: McpConnection, why: string): void {
    this.#instances.delete(key);
    this.options.logger.info({ server: this.server.name, why }, "stopping an isolated mcp server");
    connection.close().catch(() => undefined);
  }
}
