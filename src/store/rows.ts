import type { StoredEvent, StoredEventType } from "../../protocol/events.js";
import type { SessionStatus } from "../../protocol/session.js";
import type { SessionRecord } from "../sessions/session-record.js";
import type { IdempotencyRecord } from "./store.js";

// Sessions and events as both SQL stores keep them: JSON as text, which is what both ends have.

export interface SessionRow {
  id: string;
  tenant_id: string;
  status: SessionStatus;
  config: string;
  created_at: string;
}

export interface EventRow {
  seq: number;
  type: StoredEventType;
  at: string;
  data: string;
}

export function toSession(row: SessionRow): SessionRecord {
  return {
    id: row.id,
    tenant_id: row.tenant_id,
    status: row.status,
    config: JSON.parse(row.config),
    created_at: row.created_at,
  };
}

/** An event as it was appended: its data was checked on the way in, so it is trusted on the way out. */
export function toEvent(row: EventRow): StoredEvent {
  return { seq: row.seq, type: row.type, at: row.at, data: JSON.parse(row.data) } as StoredEvent;
}

/** An idempotency key's row, as both stores keep it: `status` is null until the request is answered. */
export interface IdempotencyRow {
  fingerprint: string;
  status: number | null;
  body: string | null;
}

export function toIdempotencyRecord(row: IdempotencyRow): IdempotencyRecord {
  return {
    fingerprint: row.fingerprint,
    answer: row.status === null ? undefined : { status: row.status, body: row.body ?? "" },
  };
}
