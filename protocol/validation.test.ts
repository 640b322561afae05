import { Type } from "@sinclair/typebox";
import { describe, expect, it } from "vitest";
import { compile, defaultsOf, describeErrors } from "./validation.js";

describe("defaultsOf", () => {
  it("gives each property's default, optional or not", () => {
    const schema = Type.Object({
      seconds: Type.Optional(Type.Number({ default: 2.5 })),
      name: Type.String({ default: "x" }),
    });
    expect(defaultsOf(schema)).toEqual({ seconds: 2.5, name: "x" });
  });

  it("refuses a schema with a property that has no default, naming it", () => {
    expect(() => defaultsOf(Type.Object({ a: Type.Number({ default: 1 }), b: Type.Number() }))).toThrow(
      "defaultsOf: b has no default",
    );
  });
});

describe("compile and describeErrors", () => {
  const Items = Type.Array(Type.Object({ n: Type.Integer() }, { additionalProperties: false }));
  const wrong = Array.from({ length: 1000 }, (_, i) => ({ n: `${i}` }));

  it("names every problem once by default, and stops at `max`", () => {
    const validate = compile(Items);
    expect(validate(wrong)).toBe(false);
    expect(describeErrors(validate.errors)).toHaveLength(1000);
    expect(describeErrors(validate.errors, "items", 3)).toEqual([
      "items[0].n: must be integer",
      "items[1].n: must be integer",
      "items[2].n: must be integer",
    ]);
    // the same problem twice is one line
    expect(describeErrors([...(validate.errors ?? []), ...(validate.errors ?? [])])).toHaveLength(1000);
  });

  it("with firstError, reports only the first problem it meets", () => {
    const validate = compile(Items, { firstError: true });
    expect(validate(wrong)).toBe(false);
    expect(describeErrors(validate.errors)).toEqual(["[0].n: must be integer"]);
    expect(validate([{ n: 1 }])).toBe(true);
  });
});
