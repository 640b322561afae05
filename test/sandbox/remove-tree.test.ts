import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { removeTree } from "../../services/sandbox/remove-tree.js";

const made: string[] = [];
afterEach(() => {
  for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** A directory outside the tree, with a file that must outlive every removal. */
function outside(): string {
  const dir = mkdtempSync(join(tmpdir(), "remove-tree-outside-"));
  made.push(dir);
  writeFileSync(join(dir, "keep"), "kept");
  return dir;
}

describe("removeTree", () => {
  it("removes a link where the directory was, not what it points at", () => {
    const target = outside();
    const parent = mkdtempSync(join(tmpdir(), "remove-tree-"));
    made.push(parent);
    const link = join(parent, "workspace");
    symlinkSync(target, link);
    removeTree(link);
    expect(existsSync(link)).toBe(false);
    expect(readFileSync(join(target, "keep"), "utf8")).toBe("kept");
  });

  it("removes links inside the tree, not what they point at, and is done with a tree not there", () => {
    const target = outside();
    const dir = mkdtempSync(join(tmpdir(), "remove-tree-"));
    made.push(dir);
    mkdirSync(join(dir, "a", "b"), { recursive: true });
    symlinkSync(target, join(dir, "a", "to-dir"));
    symlinkSync(join(target, "keep"), join(dir, "a", "b", "to-file"));
    removeTree(dir);
    expect(existsSync(dir)).toBe(false);
    expect(readFileSync(join(target, "keep"), "utf8")).toBe("kept");
    expect(() => removeTree(dir)).not.toThrow();
  });
});
