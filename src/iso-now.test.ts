import { describe, expect, it } from "vitest";
import { isoNow } from "./iso-now.js";

describe("isoNow", () => {
  const same = (ms: number) => expect(isoNow(ms)).toBe(new Date(ms).toISOString());

  it("writes what toISOString writes, across minutes, hours, days and years, forward and back", () => {
    const start = Date.UTC(2026, 11, 31, 23, 58, 59, 990);
    // every millisecond across a year's last minute boundary, then the steps a clock makes
    for (let ms = start; ms < start + 2 * 60_000; ms += 7) same(ms);
    for (const ms of [start + 61_010, start + 1, start - 3_600_000, start + 86_400_000 * 59]) same(ms);
  });

  it("writes the edges of the range the way toISOString does", () => {
    for (const ms of [
      0, -1, 59_999, 60_000, -60_000, -62_198_755_200_000, 253_402_300_799_999, 253_402_300_800_000,
    ])
      same(ms);
    for (let i = 0; i < 10_000; i++) same(Math.floor((Math.random() - 0.3) * 300_000_000_000_000) % 8.64e15);
  });

  it("is the time now", () => {
    const before = Date.now();
    const now = Date.parse(isoNow());
    expect(now).toBeGreaterThanOrEqual(before);
    expect(now).toBeLessThanOrEqual(Date.now());
  });
});
