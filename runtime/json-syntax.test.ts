import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { seededRandom } from "../test/reliability/random.js";
import { jsonSyntaxError } from "./json-syntax.js";

const ROOT = join(import.meta.dirname, "..");

describe("jsonSyntaxError", () => {
  it.each([
    ["{ not json", 1, 3, "found 'n' where a property name in double quotes should be"],
    ['{\n  "a": [1, 2,]\n}', 2, 14, "found ']' where a value should be"],
    ['{\n  "a": 1,\n}', 3, 1, "found '}' where a property name in double quotes should be"],
    ['{\n  "a": 1\n  "b": 2\n}', 3, 3, "found '\"' where ',' or '}' should be"],
    ['{"a": "x', 1, 9, 'the text ends where a closing " should be'],
    [
      '{"a": "x\ny"}',
      1,
      9,
      'found a line end where a closing " (a line end or tab inside a string is written \\n or \\t) should be',
    ],
    ['{"a": tru}', 1, 7, "found 't' where a value should be"],
    ['{"a": 01}', 1, 8, "found '1' where ',' or '}' should be"],
    ['{"a": 1.}', 1, 9, "found '}' where a digit after the decimal point should be"],
    [
      '{"a": "\\x"}',
      1,
      9,
      "found 'x' where an escape: \\\" \\\\ \\/ \\b \\f \\n \\r \\t or \\uXXXX should be",
    ],
    ['{"a": "\\u12g4"}', 1, 12, "found 'g' where four hexadecimal digits after \\u should be"],
    ["{'a': 1}", 1, 2, "found ''' where a property name in double quotes should be"],
    ['{"é😀": 1} x', 1, 11, "found 'x' where the end of the text should be"],
    ["", 1, 1, "the text ends where a value should be"],
    ['{\r\n\t"a" 1}', 2, 6, "found '1' where ':' after the property name should be"],
  ])("places %j at line %i, column %i", (text, line, column, problem) => {
    expect(jsonSyntaxError(text)).toEqual({ line, column, problem });
  });

  it("finds nothing wrong in JSON, the repository's configs among it", () => {
    for (const file of ["examples/brain.json", "schema/brain.schema.json", "package.json"]) {
      expect(jsonSyntaxError(readFileSync(join(ROOT, file), "utf8"))).toBeUndefined();
    }
    for (const text of ['"x"', "-0.5e+3", " [ ] ", '{"a":{"b":[true,false,null,"\\u00e9\\n"]}}']) {
      expect(jsonSyntaxError(text)).toBeUndefined();
    }
  });

  it("agrees with JSON.parse on every text cut or changed from valid JSON", () => {
    const random = seededRandom();
    const source = readFileSync(join(ROOT, "examples/brain.json"), "utf8");
    const pieces = ['"', ",", "]", "}", "{", "[", ":", "\\", "\n", "0", "-", ".", "e", "t", " ", "\u0001"];
    for (let round = 0; round < 2000; round++) {
      const at = random.int(source.length);
      const text =
        random.int(3) === 0
          ? source.slice(0, at)
          : `${source.slice(0, at)}${random.pick(pieces)}${source.slice(at + random.int(2))}`;
      let parses = true;
      try {
        JSON.parse(text);
      } catch {
        parses = false;
      }
      expect(jsonSyntaxError(text) === undefined, `seed ${random.seed}, round ${round}: ${text}`).toBe(
        parses,
      );
    }
  });
});
