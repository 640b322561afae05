import type { NewEvent } from "../../protocol/events.js";
import type { AppendOptions, AppendResult, Store } from "../../src/store/store.js";

/**
 * A store whose appends commit in order, as every store's do, but resolve after a random delay of
 * up to `maxDelayMs`: what a networked database looks like to Brain. Everything else is the
 * wrapped store's own.
 */
export function delayedStore(store: Store, maxDelayMs: number): Store {
  const delayed = <T>(value: T): Promise<T> =>
    new Promise((resolve) => setTimeout(() => resolve(value), Math.random() * maxDelayMs));
  return {
    createSession: (session, first) => store.createSession(session, first),
    getSession: (id) => store.getSession(id),
    listSessions: (tenantId, limit, before, maxBytes) =>
      store.listSessions(tenantId, limit, before, maxBytes),
    async append(
      sessionId: string,
      events: readonly NewEvent[],
      options?: AppendOptions,
    ): Promise<AppendResult> {
      return delayed(await store.append(sessionId, events, options));
    },
    lastSeq: (sessionId) => store.lastSeq(sessionId),
    readEvents: (sessionId, afterSeq, limit, maxBytes) =>
      store.readEvents(sessionId, afterSeq, limit, maxBytes),
    sessionsWithStatus: (status) => store.sessionsWithStatus(status),
    claimIdempotencyKey: (claim) => store.claimIdempotencyKey(claim),
    answerIdempotencyKey: (tenantId, key, answer) => store.answerIdempotencyKey(tenantId, key, answer),
    releaseIdempotencyKey: (tenantId, key) => store.releaseIdempotencyKey(tenantId, key),
    close: () => store.close(),
  };
}
