import type { Session } from "../../protocol/session.js";

/** A session as Brain keeps it: what clients see of it, and the tenant it belongs to. */
export type SessionRecord = Session & { tenant_id: string };
