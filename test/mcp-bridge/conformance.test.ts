import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { expectConformance } from "../helpers/conformance.js";
import { type Bridge, EVERYTHING, FILESYSTEM, manifestOf, startBridge } from "./bridge-process.js";

// a 1×1 PNG
const PNG =
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==";

let bridge: Bridge;
let files: string;

beforeAll(async () => {
  bridge = await startBridge(
    {
      everything: { command: process.execPath, args: [EVERYTHING, "stdio"] },
      files: { command: process.execPath, args: [FILESYSTEM, "files"] },
    },
    {
      prepare: (dir) => {
        mkdirSync(join(dir, "files"));
        writeFileSync(join(dir, "files", "note.txt"), "a note");
        writeFileSync(join(dir, "files", "edit.txt"), "before");
        writeFileSync(join(dir, "files", "move.txt"), "moving");
        writeFileSync(join(dir, "files", "dot.png"), Buffer.from(PNG, "base64"));
      },
    },
  );
  files = join(bridge.dir, "files");
}, 30_000);
afterAll(() => bridge?.stop());

/** Arguments for a real call of each tool the bridge serves from the two servers. */
const ARGUMENTS: Record<string, (files: string) => Record<string, unknown>> = {
  everything_echo: () => ({ message: "conformance" }),
  "everything_get-annotated-message": () => ({ messageType: "success", includeImage: true }),
  "everything_get-env": () => ({}),
  "everything_get-resource-links": () => ({ count: 3 }),
  "everything_get-resource-reference": () => ({ resourceType: "Blob", resourceId: 1 }),
  "everything_get-structured-content": () => ({ location: "New York" }),
  "everything_get-sum": () => ({ a: 1, b: 2 }),
  "everything_get-tiny-image": () => ({}),
  "everything_gzip-file-as-resource": () => ({
    name: "hello.gz",
    data: "data:text/plain;base64,aGVsbG8=",
    outputType: "resource",
  }),
  "everything_toggle-simulated-logging": () => ({}),
  "everything_toggle-subscriber-updates": () => ({}),
  "everything_trigger-long-running-operation": () => ({ duration: 0.2, steps: 2 }),
  files_read_file: (dir) => ({ path: join(dir, "note.txt") }),
  files_read_text_file: (dir) => ({ path: join(dir, "note.txt") }),
  files_read_media_file: (dir) => ({ path: join(dir, "dot.png") }),
  files_read_multiple_files: (dir) => ({ paths: [join(dir, "note.txt"), join(dir, "edit.txt")] }),
  files_write_file: (dir) => ({ path: join(dir, "written.txt"), content: "written" }),
  files_edit_file: (dir) => ({
    path: join(dir, "edit.txt"),
    edits: [{ oldText: "before", newText: "after" }],
  }),
  files_create_directory: (dir) => ({ path: join(dir, "made") }),
  files_list_directory: (dir) => ({ path: dir }),
  files_list_directory_with_sizes: (dir) => ({ path: dir }),
  files_directory_tree: (dir) => ({ path: dir }),
  files_move_file: (dir) => ({ source: join(dir, "move.txt"), destination: join(dir, "moved.txt") }),
  files_search_files: (dir) => ({ path: dir, pattern: "note" }),
  files_get_file_info: (dir) => ({ path: join(dir, "note.txt") }),
  files_list_allowed_directories: () => ({}),
};

it("serves every tool of both servers, and knows arguments for each", async () => {
  const served = (await manifestOf(bridge)).tools.map((tool) => tool.name).sort();
  expect(served).toEqual(Object.keys(ARGUMENTS).sort());
});

it.each(Object.keys(ARGUMENTS))("%s passes every rule of brain tools check", async (name) => {
  await expectConformance(
    { ...bridge, logs: bridge.logs },
    name,
    (ARGUMENTS[name] as (dir: string) => Record<string, unknown>)(files),
  );
});
