import { hash } from "node:crypto";
import type { ServerResponse } from "node:http";
import { percentDecoded } from "../../runtime/percent-decoding.js";
import { type Store, StoreUnavailableError } from "../store/store.js";
import { ApiError } from "./errors.js";
import { sendJson } from "./http.js";
import type { RequestContext } from "./router.js";

/** An answer before it is sent: what a retry with the same idempotency key gets again. */
export interface Answer {
  status: number;
  body: unknown;
  headers?: Record<string, string>;
}

/** How long a key holds its answer. */
const KEPT_MS = 24 * 60 * 60 * 1000;
/** A key claimed and never answered for this long belongs to a request that died with its Brain. */
const ABANDONED_MS = 60_000;
/** How long before a key counts as abandoned the last try to settle it may start. */
const SETTLE_MARGIN_MS = 15_000;
/** Visible ASCII, as Stripe's and the IETF draft's keys are (a UUID fits many times over). */
const KEY_PATTERN = /^[\x21-\x7e]{1,255}$/;

export const errorAnswer = (error: ApiError): Answer => ({ status: error.status, body: error });

/**
 * Run a request once per `Idempotency-Key`: a retry with the same key and the same request gets
 * the first answer again and does nothing; the same key with another request is refused (422); a
 * retry while the first is still running, 409. Only a success is kept: after a refusal, the
 * request may be tried again with its key. Without the header, `run` just runs.
 */
export async function answerOnce(
  ctx: RequestContext,
  store: Store,
  body: unknown,
  run: () => Promise<Answer>,
): Promise<Answer> {
  const header = ctx.req.headers["idempotency-key"];
  if (header === undefined) return run();
  if (typeof header !== "string" || !KEY_PATTERN.test(header)) {
    return errorAnswer(
      new ApiError("invalid_request", "Idempotency-Key: 1 to 255 visible ASCII characters, once"),
    );
  }
  // the request as it is meant: fields in any order, the path with its escapes undone
  const fingerprint = hash(
    "sha256",
    `${ctx.req.method} ${percentDecoded(ctx.url.pathname) ?? ctx.url.pathname}\n${canonicalJson(body)}`,
    "base64url",
  );
  const now = Date.now();
  const held = await store.claimIdempotencyKey({
    tenantId: ctx.tenantId,
    key: header,
    fingerprint,
    now,
    expiredBefore: now - KEPT_MS,
    abandonedBefore: now - ABANDONED_MS,
  });
  if (held) {
    if (held.fingerprint !== fingerprint) {
      return errorAnswer(
        new ApiError(
          "idempotency_key_reused",
          "this Idempotency-Key was used with another request in the last 24 hours; use a new key",
        ),
      );
    }
    if (!held.answer) {
      return {
        ...errorAnswer(
          new ApiError("idempotency_key_in_use", "a request with this Idempotency-Key is still running"),
        ),
        headers: { "retry-after": "1" },
      };
    }
    const kept = JSON.parse(held.answer.body) as Pick<Answer, "body" | "headers">;
    return {
      status: held.answer.status,
      body: kept.body,
      headers: { ...kept.headers, "idempotent-replayed": "true" },
    };
  }
  // past this, a retry takes the key for abandoned and runs the request again: a settling write
  // still out then would land on that retry's claim, so none starts within a margin of it
  const settleBy = now + ABANDONED_MS - SETTLE_MARGIN_MS;
  const release = () => store.releaseIdempotencyKey(ctx.tenantId, header);
  let answer: Answer;
  try {
    answer = await run();
  } catch (error) {
    // the request's own error is what the client hears, whatever the release met
    await settleKey(release, settleBy).catch(() => undefined);
    throw error;
  }
  if (answer.status >= 200 && answer.status < 300) {
    const kept = JSON.stringify({ body: answer.body, ...(answer.headers && { headers: answer.headers }) });
    // done is done: a store that cannot keep the answer now must not turn it into a 503 that says
    // nothing happened; retries are told the request still runs until the answer is kept
    await settleKey(
      () => store.answerIdempotencyKey(ctx.tenantId, header, { status: answer.status, body: kept }),
      settleBy,
    );
  } else {
    await settleKey(release, settleBy);
  }
  return answer;
}

/** Settle a claimed key now, or, while the store cannot be reached, in the background. */
async function settleKey(settle: () => Promise<void>, by: number): Promise<void> {
  try {
    await settle();
  } catch (error) {
    if (!(error instanceof StoreUnavailableError)) throw error;
    settleKeyLater(settle, by);
  }
}

/**
 * Settle a claimed key in the background, trying again while the store cannot be reached and
 * the key is not yet taken for abandoned: a key left claimed would answer every retry "still
 * running" until then, and a request that was done would then run again.
 */
function settleKeyLater(settle: () => Promise<void>, by: number, waitMs = 100): void {
  if (Date.now() + waitMs > by) return;
  setTimeout(() => {
    settle().catch((error: unknown) => {
      if (error instanceof StoreUnavailableError) settleKeyLater(settle, by, Math.min(waitMs * 2, 2000));
    });
  }, waitMs).unref();
}

export function sendAnswer(res: ServerResponse, answer: Answer): void {
  for (const [name, value] of Object.entries(answer.headers ?? {})) res.setHeader(name, value);
  sendJson(res, answer.status, answer.body);
}

/** JSON with every object's keys in order: two bodies that differ only in field order are one. */
function canonicalJson(value: unknown): string {
  return JSON.stringify(value, (_, item: unknown) =>
    item !== null && typeof item === "object" && !Array.isArray(item)
      ? Object.fromEntries(Object.entries(item).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : item,
  );
}
