import { request } from "undici";
import { BodyTooLarge, readBounded } from "./http.js";

/** One stored event of a session, as Brain's API serves it. */
export interface InspectedEvent {
  seq: number;
  type: string;
  at: string;
  data: Record<string, unknown>;
}

/** A session as Brain's API serves it. */
export interface InspectedSession {
  id: string;
  status: string;
  config: Record<string, unknown>;
  created_at: string;
}

/** Read access to the calling session, good until the call returns (docs/protocol.md, inspection). */
export interface SessionInspector {
  session(): Promise<InspectedSession>;
  /**
   * Stored events after `after` (0: from the start), at most `limit` of them, and fewer when they
   * are large: page on with `after` = the last seq until a page is empty.
   */
  events(options?: { after?: number; limit?: number }): Promise<InspectedEvent[]>;
}

export class InspectionError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
    this.name = "InspectionError";
  }
}

const MAX_RESPONSE_BYTES = 16 * 1024 * 1024;

/**
 * The inspector for one call. The token lives only in this closure: it is never logged, stored,
 * or put in an error message.
 */
export function createInspector(
  brainUrl: string,
  token: string,
  sessionId: string,
  signal: AbortSignal,
): SessionInspector {
  const base = `${brainUrl.replace(/\/+$/, "")}/sessions/${encodeURIComponent(sessionId)}`;
  const get = async <T>(url: string): Promise<T> => {
    const response = await request(url, {
      method: "GET",
      headers: { authorization: `Bearer ${token}`, accept: "application/json" },
      signal,
    });
    let bytes: Buffer;
    try {
      bytes = await readBounded(response.body, MAX_RESPONSE_BYTES);
    } catch (error) {
      response.body.destroy();
      if (error instanceof BodyTooLarge) throw new InspectionError(response.statusCode, error.message);
      throw error;
    }
    if (response.statusCode !== 200) {
      const hint =
        response.statusCode === 401 ? " (the inspection token stops working when the call returns)" : "";
      throw new InspectionError(
        response.statusCode,
        `Brain answered ${response.statusCode} to ${url}${hint}`,
      );
    }
    return JSON.parse(bytes.toString("utf8")) as T;
  };
  return {
    session: () => get<InspectedSession>(base),
    events: async (options = {}) => {
      const query = new URLSearchParams({ after: String(options.after ?? 0) });
      if (options.limit !== undefined) query.set("limit", String(options.limit));
      return (await get<{ events: InspectedEvent[] }>(`${base}/events?${query}`)).events;
    },
  };
}
