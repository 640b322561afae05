import pg from "pg";
import type { Logger } from "../../telemetry/logger.js";

export type NotificationHandler = (payload: string) => void;

const RECONNECT_FIRST_MS = 100;
const RECONNECT_MAX_MS = 5000;
/**
 * A connection that only listens never writes, so a peer gone without a word (a NAT that forgot
 * it, a failover without a reset) would go unnoticed for good: it is asked a question this often,
 * and taken for lost when the answer takes longer than HEARTBEAT_TIMEOUT_MS.
 */
export const HEARTBEAT_EVERY_MS = 5000;
export const HEARTBEAT_TIMEOUT_MS = 3000;
/** TCP keepalive too, so that the kernel gives up on a silent peer even while nothing asks it. */
const KEEPALIVE_DELAY_MS = 10_000;

/**
 * One connection that LISTENs for the whole instance: the bus, the leases and the inspection
 * grants each take their channels. A lost connection, or one that stops answering, is made again
 * with backoff, and whoever asked is told, since notifications sent meanwhile are gone: they read
 * what they missed.
 */
export class PostgresNotifications {
  readonly #handlers = new Map<string, NotificationHandler>();
  readonly #reconnected: (() => void)[] = [];
  #client: pg.Client | undefined;
  #closed = false;
  #retryMs = RECONNECT_FIRST_MS;
  #retryTimer: NodeJS.Timeout | undefined;
  #heartbeatTimer: NodeJS.Timeout | undefined;

  constructor(
    private readonly url: string,
    private readonly logger: Logger,
  ) {}

  /** Take a channel; call before `start`. */
  on(channel: string, handler: NotificationHandler): void {
    this.#handlers.set(channel, handler);
  }

  /** Called after the connection was lost and made again. */
  onReconnect(handler: () => void): void {
    this.#reconnected.push(handler);
  }

  async start(): Promise<void> {
    this.#use(await this.#connect());
  }

  async close(): Promise<void> {
    this.#closed = true;
    clearTimeout(this.#retryTimer);
    clearTimeout(this.#heartbeatTimer);
    await this.#client?.end().catch(() => undefined);
  }

  #use(client: pg.Client): void {
    this.#client = client;
    this.#heartbeat(client);
  }

  /** One question after another, never two at once: a slow answer is not asked again meanwhile. */
  #heartbeat(client: pg.Client): void {
    this.#heartbeatTimer = setTimeout(async () => {
      if (this.#closed || this.#client !== client) return;
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<false>((resolve) => {
        timer = setTimeout(() => resolve(false), HEARTBEAT_TIMEOUT_MS).unref();
      });
      const answered = client.query("SELECT 1").then(
        () => true,
        () => false,
      );
      const alive = await Promise.race([answered, late]);
      clearTimeout(timer);
      // closed, or reconnected, while the question was out: that connection has a heartbeat of its own
      if (this.#closed || this.#client !== client) return;
      if (alive) this.#heartbeat(client);
      else this.#lost(client);
    }, HEARTBEAT_EVERY_MS);
    this.#heartbeatTimer.unref();
  }

  async #connect(): Promise<pg.Client> {
    const client = new pg.Client({
      connectionString: this.url,
      connectionTimeoutMillis: 5000,
      keepAlive: true,
      keepAliveInitialDelayMillis: KEEPALIVE_DELAY_MS,
    });
    client.on("notification", (message) => {
      const handler = this.#handlers.get(message.channel);
      if (handler && message.payload !== undefined) handler(message.payload);
    });
    client.on("error", () => this.#lost(client));
    client.on("end", () => this.#lost(client));
    await client.connect();
    for (const channel of this.#handlers.keys()) await client.query(`LISTEN ${channel}`);
    return client;
  }

  #lost(client: pg.Client): void {
    if (this.#closed || this.#client !== client) return;
    this.#client = undefined;
    clearTimeout(this.#heartbeatTimer);
    // with the heartbeat's question unanswered, this destroys the socket rather than wait on it
    client.end().catch(() => undefined);
    this.logger.warn("lost the PostgreSQL notification connection; connecting again");
    this.#retry();
  }

  #retry(): void {
    this.#retryTimer = setTimeout(async () => {
      try {
        const client = await this.#connect();
        if (this.#closed) {
          await client.end();
          return;
        }
        this.#use(client);
        this.#retryMs = RECONNECT_FIRST_MS;
        this.logger.info("PostgreSQL notification connection back");
        for (const handler of this.#reconnected) handler();
      } catch {
        this.#retryMs = Math.min(this.#retryMs * 2, RECONNECT_MAX_MS);
        if (!this.#closed) this.#retry();
      }
    }, this.#retryMs);
    this.#retryTimer.unref();
  }
}
