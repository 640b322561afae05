/**
 * Results kept per tenant for `ttlMs`: a key always starts with the tenant, so one tenant never
 * gets another's result. At most `maxEntries` over all tenants; the least recently used go first.
 */
export class ResultCache<V> {
  private readonly entries = new Map<string, { value: V; at: number }>();

  constructor(
    private readonly ttlMs: number,
    private readonly maxEntries: number,
    private readonly now: () => number = Date.now,
  ) {}

  /** The value and when it was stored, or undefined when absent or expired. */
  get(tenant: string, key: string): { value: V; at: number } | undefined {
    const id = `${tenant}\u0000${key}`;
    const entry = this.entries.get(id);
    if (!entry) return undefined;
    this.entries.delete(id);
    if (this.now() - entry.at >= this.ttlMs) return undefined;
    this.entries.set(id, entry); // most recently used last
    return entry;
  }

  set(tenant: string, key: string, value: V): void {
    if (this.ttlMs <= 0) return;
    const id = `${tenant}\u0000${key}`;
    this.entries.delete(id);
    this.entries.set(id, { value, at: this.now() });
    while (this.entries.size > this.maxEntries) {
      const oldest = this.entries.keys().next().value;
      if (oldest === undefined) break;
      this.entries.delete(oldest);
    }
  }
}
