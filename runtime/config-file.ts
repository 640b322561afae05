import { readFileSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { jsonSyntaxError } from "./json-syntax.js";

export type JsonFileResult = { ok: true; value: unknown; dir: string } | { ok: false; problems: string[] };

/**
 * A config file's parsed JSON and its directory, which relative paths in it resolve against; or
 * the one problem that stops reading it, in the words of the config's other problems.
 */
export function readJsonFile(path: string): JsonFileResult {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (error) {
    return {
      ok: false,
      problems: [`cannot read ${path}: ${(error as NodeJS.ErrnoException).code ?? error}`],
    };
  }
  // editors on Windows may begin a UTF-8 file with a byte order mark, which JSON does not allow
  const json = text.replace(/^\uFEFF/, "");
  try {
    return { ok: true, value: JSON.parse(json), dir: dirname(resolve(path)) };
  } catch (error) {
    const syntax = jsonSyntaxError(json);
    const where = syntax
      ? `line ${syntax.line}, column ${syntax.column}: ${syntax.problem}`
      : (error as Error).message;
    return { ok: false, problems: [`(root): not valid JSON: ${where}`] };
  }
}
