import { readFileSync } from "node:fs";
import { dirname, resolve } from "node:path";

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
  try {
    return { ok: true, value: JSON.parse(text), dir: dirname(resolve(path)) };
  } catch (error) {
    return { ok: false, problems: [`(root): not valid JSON: ${(error as Error).message}`] };
  }
}
