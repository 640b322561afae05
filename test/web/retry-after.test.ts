import { describe, expect, it } from "vitest";
import { braveResetSeconds } from "../../services/web/search/brave.js";
import { retryAfterSeconds } from "../../services/web/search/provider.js";

const NOW = Date.parse("2026-03-01T12:00:00Z");

describe("Retry-After", () => {
  it.each([
    ["17", 17],
    ["0", 0],
    [" 2 ", 2],
    ["Sun, 01 Mar 2026 12:00:30 GMT", 30],
    ["Sunday, 01-Mar-26 12:00:30 GMT", 30],
    ["Sun Mar  1 12:00:30 2026", 30],
    ["Sun, 01 Mar 2026 11:00:00 GMT", 0], // already past: retry now
    [undefined, undefined],
    ["", undefined],
    ["-5", undefined],
    ["1.5", undefined],
    ["soon", undefined],
  ])("%j is %j seconds", (value, seconds) => {
    const headers = new Headers(value === undefined ? {} : { "retry-after": value });
    expect(retryAfterSeconds(headers, NOW)).toBe(seconds);
  });
});

describe("Brave's X-RateLimit-Reset", () => {
  it.each([
    ["the per-second window spent", { remaining: "0, 1500", reset: "1, 1419704" }, 1],
    ["the monthly window spent", { remaining: "1, 0", reset: "1, 1419704" }, 1419704],
    ["no headers", {}, undefined],
    ["no reset header", { remaining: "0, 1500" }, undefined],
    ["an empty reset header", { remaining: "0, 1500", reset: "" }, undefined],
    ["a reset that is no number", { remaining: "0, 1500", reset: "soon, 1419704" }, undefined],
    ["a negative reset", { remaining: "0, 1500", reset: "-1, 1419704" }, undefined],
    ["a fractional reset", { remaining: "0, 1500", reset: "0.5, 1419704" }, undefined],
  ])("%s", (_what, sent: { remaining?: string; reset?: string }, seconds) => {
    const headers = new Headers();
    if (sent.remaining !== undefined) headers.set("x-ratelimit-remaining", sent.remaining);
    if (sent.reset !== undefined) headers.set("x-ratelimit-reset", sent.reset);
    expect(braveResetSeconds(headers)).toBe(seconds);
  });
});
