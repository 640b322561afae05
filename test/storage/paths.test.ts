import { describe, expect, it } from "vitest";
import { normalizePath, normalizePrefix, scopePrefix } from "../../services/storage/paths.js";
import { refusal, unwrap } from "./backend-conformance.js";

describe("normalizePath", () => {
  it.each([
    ["parent", "../secret"],
    ["parent alone", ".."],
    ["current alone", "."],
    ["parent in the middle", "notes/../../etc/passwd"],
    ["parent at the end", "notes/.."],
    ["current at the start", "./notes"],
    ["current in the middle", "notes/./todo"],
    ["absolute", "/etc/passwd"],
    ["absolute, doubled", "//server/share/x"],
    ["windows drive", "C:\\Windows\\win.ini"],
    ["windows drive with slash", "c:/x"],
    ["windows UNC", "\\\\server\\share"],
    ["backslash traversal", "..\\..\\x"],
    ["backslash inside", "notes\\..\\x"],
    ["NUL", "notes/a\u0000.txt"],
    ["NUL to truncate an extension", "secret\u0000.png"],
    ["newline", "a\nb"],
    ["tab", "a\tb"],
    ["DEL", "a\u007fb"],
    ["empty segment", "notes//todo"],
    ["trailing slash", "notes/"],
    ["empty", ""],
    ["too long", `${"a/".repeat(512)}b`],
    ["segment too long", "x".repeat(256)],
  ])("refuses %s", (_kind, path) => {
    expect(refusal(normalizePath(path))).toBe("invalid_path");
  });

  it.each([
    ["percent-encoded dots stay a literal name", "%2e%2e/x"],
    ["fullwidth dots stay a literal name", "\uFF0E\uFF0E/x"],
    ["a two-dot leader stays a literal name", "\u2025/x"],
    ["dots inside names", "..hidden/a..b/c.d..."],
    ["a dotfile", ".env"],
    ["spaces and unicode", "reports/Q3 résumé 📈.md"],
    ["the longest segment", "x".repeat(255)],
  ])("keeps %s", (_kind, path) => {
    expect(unwrap(normalizePath(path))).toBe(path.normalize("NFC"));
  });

  it("normalizes to NFC, so both spellings of é name one object", () => {
    expect(unwrap(normalizePath("cafe\u0301"))).toBe("caf\u00e9");
  });

  it("says what is wrong and what to do", () => {
    const outcome = normalizePath("/etc/passwd");
    expect(!outcome.ok && outcome.error.message).toMatch(/absolute.*such as notes\/todo\.md/);
  });
});

describe("normalizePrefix", () => {
  it("allows everything, folders and name starts", () => {
    expect(unwrap(normalizePrefix(""))).toBe("");
    expect(unwrap(normalizePrefix("notes/"))).toBe("notes/");
    expect(unwrap(normalizePrefix("notes/2026-"))).toBe("notes/2026-");
  });

  it.each(["../", "..", "/", "/etc", "a//", "a/../", "a\u0000", "./"])("refuses %j", (prefix) => {
    expect(refusal(normalizePrefix(prefix))).toBe("invalid_path");
  });
});

describe("scopePrefix", () => {
  const ids = (tenant_id: string, session_id = "ses_1") => ({ tenant_id, session_id });

  it("gives each tenant, or each session, a folder of its own", () => {
    expect(unwrap(scopePrefix("tenant", ids("acme")))).toBe("tenants/acme/");
    expect(unwrap(scopePrefix("session", ids("acme", "ses_9")))).toBe("sessions/acme/ses_9/");
  });

  it("encodes ids so none can climb out of its folder or name another's", () => {
    expect(unwrap(scopePrefix("tenant", ids("..")))).toBe("tenants/%2E%2E/");
    expect(unwrap(scopePrefix("tenant", ids(".")))).toBe("tenants/%2E/");
    expect(unwrap(scopePrefix("tenant", ids("a/b")))).toBe("tenants/a%2Fb/");
    expect(unwrap(scopePrefix("session", ids("acme", "../../tenants/globex")))).toBe(
      "sessions/acme/..%2F..%2Ftenants%2Fglobex/",
    );
    // "%2E" itself is encoded, so it cannot collide with the spelling of "."
    expect(unwrap(scopePrefix("tenant", ids("%2E")))).toBe("tenants/%252E/");
  });

  it("refuses empty and overlong ids", () => {
    expect(refusal(scopePrefix("tenant", ids("")))).toBe("invalid_argument");
    expect(refusal(scopePrefix("session", ids("acme", "s".repeat(81))))).toBe("invalid_argument");
  });
});
