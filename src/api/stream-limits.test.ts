import { describe, expect, it } from "vitest";
import { TenantStreamLimits } from "./stream-limits.js";

describe("TenantStreamLimits", () => {
  it("gives a tenant its max_event_streams places, each back once, and leaves other tenants alone", () => {
    const limits = new TenantStreamLimits([
      { id: "acme", maxEventStreams: 2 },
      { id: "globex", maxEventStreams: undefined },
    ]);
    const first = limits.take("acme");
    const second = limits.take("acme");
    expect(first && second).toBeTypeOf("function");
    expect(limits.take("acme")).toBeUndefined();
    // a tenant without the limit, and one the config does not name, are never refused
    for (let i = 0; i < 100; i++) expect(limits.take("globex")).toBeTypeOf("function");
    expect(limits.take("initech")).toBeTypeOf("function");
    first?.();
    first?.();
    // given back once: one place, not two
    expect(limits.take("acme")).toBeTypeOf("function");
    expect(limits.take("acme")).toBeUndefined();
  });
});
