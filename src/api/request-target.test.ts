import { describe, expect, it } from "vitest";
import { requestTarget } from "./request-target.js";

const TARGETS = [
  "/",
  "/sessions",
  "/sessions/ses_01JXYZ/events",
  "/sessions/ses_01JXYZ/events?after=12",
  "/sessions?limit=5&cursor=ses_01JXYZ",
  "/sessions?",
  "/sessions?a=1&a=2&b",
  "/sessions?q=a+b%20c%2Bd",
  "/sessions?q=%E2%82%AC&r=%zz",
  "/sessions?q=\"x\"<y>'z'",
  "/sessions?q=1#fragment",
  "/sessions#fragment",
  "/sessions//events",
  "//brain.example/sessions",
  "//brainhost/sessions",
  "/sessions/../healthz",
  "/sessions/./ses_01JXYZ",
  "/sessions/%2e%2e/healthz",
  "/sessions/ses%5F01JXYZ",
  "/sessions\\ses_01JXYZ",
  "/sessions/ses_€",
  "/sessions/ses_01JXYZ/events?after=1&after=2",
  "/ses sions",
];

describe("requestTarget", () => {
  it.each(TARGETS)("reads %s as the WHATWG URL parser does", (raw) => {
    const parsed = new URL(raw, "http://brain.invalid");
    const target = requestTarget(raw);
    expect(target?.pathname).toBe(parsed.pathname);
    expect([...(target?.searchParams ?? [])]).toEqual([...parsed.searchParams]);
  });

  it("is undefined for a target the parser refuses", () => {
    expect(requestTarget("//[::1")).toBeUndefined();
  });
});
