import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { Type } from "@sinclair/typebox";
import { describe, expect, it } from "vitest";
import { ResultObjectSchema } from "./result.js";
import { compile, compileNow, defaultsOf, describeErrors, protocolAjv } from "./validation.js";

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

  it("compiles at first use, or when compileNow says so", () => {
    const broken = () => compile(Type.Unsafe({ type: "object", minProperties: "one" }));
    expect(broken).not.toThrow();
    expect(() => compileNow(compile(Items), broken())).toThrow(/minProperties/);
    const validate = compile(Items);
    compileNow(validate);
    // what it said of undefined is not left behind
    expect(validate([{ n: 1 }])).toBe(true);
    expect(validate.errors).toBeNull();
  });

  it("with firstError, reports only the first problem it meets", () => {
    const validate = compile(Items, { firstError: true });
    expect(validate(wrong)).toBe(false);
    expect(describeErrors(validate.errors)).toEqual(["[0].n: must be integer"]);
    expect(validate([{ n: 1 }])).toBe(true);
  });
});

describe("the first-error instance, which does not check its schemas", () => {
  const root = join(import.meta.dirname, "..");

  it("compiles only the tool result's schema, which is valid JSON Schema 2020-12", () => {
    const users: string[] = [];
    for (const folder of ["protocol", "src", "services", "kit", "runtime"]) {
      for (const entry of readdirSync(join(root, folder), { recursive: true, withFileTypes: true })) {
        if (!entry.isFile() || !entry.name.endsWith(".ts") || entry.name.endsWith(".test.ts")) continue;
        const path = join(entry.parentPath, entry.name);
        if (readFileSync(path, "utf8").includes("firstError: true")) users.push(path.slice(root.length + 1));
      }
    }
    // a new schema compiled with firstError is checked here too
    expect(users).toEqual(["protocol/result.ts"]);
    const checking = protocolAjv();
    expect(checking.validateSchema(ResultObjectSchema), JSON.stringify(checking.errors)).toBe(true);
  });

  it("has a check that refuses a schema breaking the meta-schema", () => {
    const checking = protocolAjv();
    expect(checking.validateSchema({ type: "object", required: ["a", "a"] })).toBe(false);
    expect(checking.errors?.[0]?.message).toMatch(/duplicate items/);
  });
});
