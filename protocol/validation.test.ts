import { Type } from "@sinclair/typebox";
import { describe, expect, it } from "vitest";
import { defaultsOf } from "./validation.js";

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
