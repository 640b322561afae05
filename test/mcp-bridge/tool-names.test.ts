import { expect, it } from "vitest";
import { brainToolNames } from "../../services/mcp-bridge/tool-names.js";

const fit = /^[a-zA-Z0-9_-]{1,64}$/;

it("serves a tool as PREFIX_NAME when that fits and is its own", () => {
  const named = brainToolNames([
    { server: "files", prefix: "files", name: "read_file" },
    { server: "everything", prefix: "", name: "get-sum" },
  ]);
  expect(named).toEqual({ names: ["files_read_file", "get-sum"], renamed: [] });
});

it("renames names with unfit characters and over-long names, saying why, each name fitting Brain's pattern", () => {
  const long = "x".repeat(70);
  const { names, renamed } = brainToolNames([
    { server: "s", prefix: "s", name: "read.file" },
    { server: "s", prefix: "s", name: long },
  ]);
  expect(names[0]).toMatch(/^s_read_file_[0-9a-f]{8}$/);
  expect(names[1]).toMatch(/^s_x+_[0-9a-f]{8}$/);
  for (const name of names) expect(name).toMatch(fit);
  expect(renamed).toEqual([
    expect.stringContaining('tool "read.file" of server "s" is served as s_read_file_'),
    expect.stringContaining("is longer than 64 characters"),
  ]);
});

it("renames both tools of a clash, never dropping one, the same whatever the order", () => {
  const tools = [
    { server: "a", prefix: "x", name: "b_c" },
    { server: "b", prefix: "x_b", name: "c" },
    { server: "a", prefix: "x", name: "b.c" },
  ];
  const { names, renamed } = brainToolNames(tools);
  expect(new Set(names).size).toBe(3);
  for (const name of names) expect(name).toMatch(fit);
  expect(renamed).toHaveLength(3);
  const reversed = brainToolNames([...tools].reverse());
  expect(reversed.names).toEqual([...names].reverse());
});
