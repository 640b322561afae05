import type { Condition, ObjectInfo } from "./backend.js";
import { fail, type Outcome, ok } from "./errors.js";

/** `"abc"`, `W/"abc"` and `abc` are the same etag: callers copy them from HTTP tools and from us. */
export function normalizeEtag(etag: string): string {
  return etag.replace(/^W\//, "").replace(/^"(.*)"$/, "$1");
}

/** Whether a write or delete may go ahead against the object as it is now. */
export function checkCondition(
  path: string,
  current: ObjectInfo | undefined,
  condition: Condition,
): Outcome<void> {
  if (condition.ifNoneMatch && current) {
    return fail("precondition_failed", `${path} already exists (etag ${current.etag}); nothing was written`, {
      current_etag: current.etag,
    });
  }
  if (condition.ifMatch !== undefined) {
    if (!current) {
      return fail(
        "precondition_failed",
        `${path} does not exist, so it cannot match etag ${condition.ifMatch}`,
      );
    }
    if (normalizeEtag(condition.ifMatch) !== current.etag) {
      return fail(
        "precondition_failed",
        `${path} has changed: its etag is ${current.etag}, not ${condition.ifMatch}; read it again before writing`,
        { current_etag: current.etag },
      );
    }
  }
  return ok(undefined);
}
