import { mkdtempSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { findHostLibraries, parseLddOutput } from "../../services/sandbox/host-libraries.js";
import { type LayoutRequest, resolveLayout } from "../../services/sandbox/layout.js";

const LIBC = realpathSync("/lib/x86_64-linux-gnu/libc.so.6");
const LIB_DIR = dirname(LIBC);
const root = mkdtempSync(join(tmpdir(), "sandbox-layout-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const request = (overrides: Partial<LayoutRequest> = {}): LayoutRequest => ({
  languages: new Map([["bash", "/usr/bin/bash"]]),
  programs: ["/usr/bin/cat"],
  systemPaths: ["/usr/share"],
  libraries: ["/lib/x86_64-linux-gnu/libc.so.6", "/lib64/ld-linux-x86-64.so.2"],
  languageDirs: [],
  private: [root],
  programsRoot: join(root, "programs"),
  ...overrides,
});

describe("parseLddOutput", () => {
  it("takes each library's path and the loader's, once, and nothing from files that are not dynamic", () => {
    const output = [
      "/usr/bin/ls:",
      "\tlinux-vdso.so.1 (0x00007ffd5a1f2000)",
      "\tlibselinux.so.1 => /lib/x86_64-linux-gnu/libselinux.so.1 (0x00007f0c1a0e4000)",
      "\tlibc.so.6 => /lib/x86_64-linux-gnu/libc.so.6 (0x00007f0c19f03000)",
      "\tlibmissing.so.2 => not found",
      "\t/lib64/ld-linux-x86-64.so.2 (0x00007f0c1a13c000)",
      "/usr/bin/cat:",
      "\tlibc.so.6 => /lib/x86_64-linux-gnu/libc.so.6 (0x00007f0c19f03000)",
      "/usr/bin/static:",
      "\tnot a dynamic executable",
    ].join("\n");
    expect(parseLddOutput(output)).toEqual([
      "/lib/x86_64-linux-gnu/libselinux.so.1",
      "/lib/x86_64-linux-gnu/libc.so.6",
      "/lib64/ld-linux-x86-64.so.2",
    ]);
  });
});

describe("findHostLibraries", () => {
  it("finds what the programs link against and python's import path, with its extension modules' libraries", () => {
    const found = findHostLibraries(new Map([["python", "/usr/bin/python3"]]), ["/usr/bin/ls"]);
    expect(found.libraries).toContain("/lib/x86_64-linux-gnu/libc.so.6");
    expect(found.libraries).toContain("/lib/x86_64-linux-gnu/libselinux.so.1");
    // _ssl's libraries, which the python binary itself does not need
    expect(found.libraries.some((path) => /\/libssl\.so/.test(path))).toBe(true);
    expect(found.languageDirs.map(({ path }) => path)).toContain("/usr/lib/python3.11");
    // lib-dynload lies in the standard library's directory, which brings it
    expect(found.languageDirs.map(({ path }) => path)).not.toContain("/usr/lib/python3.11/lib-dynload");
  });
});

describe("resolveLayout", () => {
  it("links the libraries into one directory per library directory, off the PATH", () => {
    const resolved = resolveLayout(request());
    if (!resolved.ok) throw new Error(resolved.problems.join("\n"));
    expect(resolved.links).toContainEqual({
      source: LIBC,
      link: join(root, "programs", LIB_DIR, "libc.so.6"),
    });
    expect(resolved.layout.mounts).toContainEqual({
      source: join(root, "programs", LIB_DIR),
      target: LIB_DIR,
    });
    expect(resolved.layout.pathDirs).toEqual(["/usr/bin"]);
    expect(resolved.layout.mounts.map((mount) => mount.target)).not.toContain("/usr/lib");
  });

  it("leaves a library to a system path that holds it", () => {
    const resolved = resolveLayout(request({ systemPaths: ["/usr/lib"] }));
    if (!resolved.ok) throw new Error(resolved.problems.join("\n"));
    expect(resolved.links.map((link) => link.source)).not.toContain(LIBC);
    expect(resolved.layout.mounts).toContainEqual({ source: "/usr/lib", target: "/usr/lib" });
  });

  it("refuses a system path inside a library directory, which shows only the libraries", () => {
    const resolved = resolveLayout(request({ systemPaths: [join(LIB_DIR, "gconv")] }));
    expect(resolved).toEqual({
      ok: false,
      problems: [
        `system_paths: ${join(LIB_DIR, "gconv")} lies in ${LIB_DIR}, where only the libraries the programs need appear`,
      ],
    });
  });

  it("names a language's directory by its language in a problem", () => {
    const resolved = resolveLayout(request({ languageDirs: [{ language: "python", path: root }] }));
    expect(resolved).toEqual({
      ok: false,
      problems: [`languages.python: ${root} would cover the sandbox's own /tmp`],
    });
  });
});
