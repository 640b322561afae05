import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { describe, expect, it } from "vitest";
import { ROOT } from "./helpers/cli.js";

// static imports and re-exports (with or without bindings) and dynamic import()
const SPECIFIER = /(?:(?:^|\n)\s*(?:import|export)\s(?:[^;]*?\sfrom\s*)?|\bimport\(\s*)"([^"]+)"/g;

/** The TypeScript sources of a top-level folder, tests included, as paths from the repository root. */
function sources(folder: string): string[] {
  const out: string[] = [];
  const walk = (dir: string) => {
    for (const entry of readdirSync(join(ROOT, dir), { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.name.endsWith(".ts")) out.push(path);
    }
  };
  walk(folder);
  return out;
}

/** What a file imports: our files by their top-level folder, and packages by name. */
function importsOf(file: string): { folders: Set<string>; packages: Set<string> } {
  const folders = new Set<string>();
  const packages = new Set<string>();
  for (const [, specifier] of readFileSync(join(ROOT, file), "utf8").matchAll(SPECIFIER)) {
    if (!specifier) continue;
    if (specifier.startsWith(".")) {
      folders.add(relative(ROOT, join(ROOT, dirname(file), specifier)).split("/")[0] as string);
    } else {
      packages.add(
        specifier.startsWith("@")
          ? specifier.split("/").slice(0, 2).join("/")
          : (specifier.split("/")[0] as string),
      );
    }
  }
  return { folders, packages };
}

/** Files of `folder` (tests aside) that import something outside `allowed`, with what. */
function breaches(
  folder: string,
  allowed: { folders: string[]; packages?: (name: string) => boolean },
): string[] {
  return sources(folder)
    .filter((file) => !file.endsWith(".test.ts"))
    .flatMap((file) => {
      const { folders, packages } = importsOf(file);
      return [
        ...[...folders].filter((found) => !allowed.folders.includes(found)),
        ...[...packages].filter((name) => allowed.packages && !allowed.packages(name)),
      ].map((found) => `${file} imports ${found}`);
    });
}

describe("the layout", () => {
  it("keeps protocol/ to itself and browser-safe: no import of ours or of Node, no Buffer or process", () => {
    const browserSafe = new Set(["@sinclair/typebox", "ajv", "ajv-formats"]);
    expect(
      breaches("protocol", { folders: ["protocol"], packages: (name) => browserSafe.has(name) }),
    ).toEqual([]);
    for (const file of sources("protocol").filter((path) => !path.endsWith(".test.ts"))) {
      const code = readFileSync(join(ROOT, file), "utf8").replace(/\/\/.*|\/\*[\s\S]*?\*\//g, "");
      expect(code, file).not.toMatch(/\bBuffer\b|\bprocess\.|\brequire\(/);
    }
  });

  it("lets runtime/ use only the protocol and Node", () => {
    expect(
      breaches("runtime", { folders: ["runtime", "protocol"], packages: (name) => name.startsWith("node:") }),
    ).toEqual([]);
  });

  it("keeps Brain and the kit apart: neither imports the other, and services import no Brain code", () => {
    expect(breaches("src", { folders: ["src", "protocol", "runtime"] })).toEqual([]);
    expect(breaches("kit", { folders: ["kit", "protocol", "runtime"] })).toEqual([]);
    expect(breaches("services", { folders: ["services", "kit", "protocol", "runtime"] })).toEqual([]);
  });

  it("puts the kit's whole surface in kit/index.ts, loading no Brain server package", () => {
    const packages = new Set([...loadedBy("kit/index.ts")].flatMap((file) => [...importsOf(file).packages]));
    for (const serverOnly of ["better-sqlite3", "pg", "@anthropic-ai/sdk", "openai"])
      expect(packages).not.toContain(serverOnly);
  });

  it("keeps the client and the console to the protocol: they run in browsers, and load nothing of Brain's server", () => {
    for (const entry of ["src/client/index.ts", "web/console/main.ts"]) {
      const loaded = [...loadedBy(entry)];
      expect(
        loaded.filter((file) => !/^(src\/client|protocol|web\/console)\//.test(file)),
        entry,
      ).toEqual([]);
      const packages = new Set(loaded.flatMap((file) => [...importsOf(file).packages]));
      expect(
        [...packages].filter((name) => !["@sinclair/typebox", "ajv", "ajv-formats"].includes(name)),
      ).toEqual([]);
      for (const file of loaded) {
        const code = readFileSync(join(ROOT, file), "utf8").replace(/\/\/.*|\/\*[\s\S]*?\*\//g, "");
        expect(code, file).not.toMatch(/\bBuffer\b|\bprocess\.|\brequire\(|\binnerHTML\b/);
      }
    }
  });
});

/** Every file of ours that `entry` loads, itself included, by following relative imports. */
function loadedBy(entry: string): Set<string> {
  const loaded = new Set<string>();
  const visit = (file: string) => {
    if (loaded.has(file)) return;
    loaded.add(file);
    for (const [, specifier] of readFileSync(join(ROOT, file), "utf8").matchAll(SPECIFIER)) {
      if (specifier?.startsWith("."))
        visit(relative(ROOT, join(ROOT, dirname(file), specifier)).replace(/\.js$/, ".ts"));
    }
  };
  visit(entry);
  return loaded;
}
