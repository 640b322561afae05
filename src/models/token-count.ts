import { MAX_TOKEN_COUNT } from "../../protocol/script.js";

/**
 * A token count of a provider's usage as Brain records it: a whole number from 0 to
 * MAX_TOKEN_COUNT. What a broken provider sends instead (a string, a negative, a count so large
 * that a turn's sum would overflow to Infinity, which JSON writes as null) must not reach the log.
 */
export function tokenCount(value: unknown): number {
  // false for NaN, negatives and anything not a number
  if (typeof value !== "number" || !(value > 0)) return 0;
  return Math.min(Math.floor(value), MAX_TOKEN_COUNT);
}
