/**
 * Every command of the README runs as written. The `sh` blocks run in order (see shell-blocks.ts
 * for the comments that skip a block or type it into a second terminal), in a copy of the
 * repository with its built dist/, with npm's cache in a temporary folder, offline and without
 * scripts (the copy is built already). Placeholders take what was printed before:
 *
 * - `ses_…`: the last session examples/session.mjs printed (`session ses_…`);
 * - `apr_…`: the last approval id printed;
 * - `export NAME=…`: the value NAME was last exported with.
 *
 * Every command must exit 0. After a `kill` line nothing the README started may be left running
 * (found by a mark in the environment) and its ports must be free. Each Brain started must have a
 * store of its own, and every file the commands wrote must be in .gitignore.
 */
import { spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync } from "node:fs";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { basename, isAbsolute, join } from "node:path";
import { afterAll, expect, it } from "vitest";
import { ROOT } from "../helpers/cli.js";
import { npxEnv, processesMarked } from "../helpers/npm.js";
import { type ShellBlock, shellBlocks } from "./shell-blocks.js";
import { Terminal } from "./terminal.js";

const COMMAND_TIMEOUT_MS = 120_000;
const PROGRAMS = ["bash", "npm", "npx", "curl", "jq", "openssl"];

const bashAccepts = (text: string) => spawnSync("bash", ["-n"], { input: text }).status === 0;
const blocks = shellBlocks(readFileSync(join(ROOT, "README.md"), "utf8"), bashAccepts);
const runnable = blocks.filter((block) => !block.skip);
const ports = [
  ...new Set(
    runnable.flatMap((block) => [...block.text.matchAll(/127\.0\.0\.1:(\d+)/g)].map((m) => Number(m[1]))),
  ),
];

const missing = PROGRAMS.filter((program) => spawnSync(program, ["--version"]).error !== undefined);
const busy = await Promise.all(ports.map(async (port) => ((await answers(port)) ? port : undefined)));
const cannotRun =
  missing.length > 0
    ? `${missing.join(", ")} not found`
    : busy.some((port) => port !== undefined)
      ? `port ${busy.filter(Boolean).join(", ")} in use (a Brain or service of yours?)`
      : undefined;
if (cannotRun) process.stderr.write(`the README's commands are not run: ${cannotRun}\n`);

function answers(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, "127.0.0.1");
    socket.once("connect", () => {
      socket.destroy();
      resolve(true);
    });
    socket.once("error", () => resolve(false));
  });
}

const MARK = randomBytes(8).toString("hex");
let work = "";
let copy = "";
const terminals = new Map<number, Terminal>();

afterAll(() => {
  // the terminals, and whatever a failed run left running in them: all were started here
  for (const pid of processesMarked("README_RUN", MARK)) process.kill(pid, "SIGKILL");
  if (work) rmSync(work, { recursive: true, force: true });
});

/** The repository as a fresh clone has it after `npm ci`: its files, node_modules and dist/. */
function copyRepository(): void {
  const local = new Set(["node_modules", ".git", "data"]);
  cpSync(ROOT, copy, { recursive: true, filter: (source) => !local.has(basename(source)) });
  symlinkSync(join(ROOT, "node_modules"), join(copy, "node_modules"), "dir");
}

function filesUnder(dir: string, prefix = ""): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = prefix ? `${prefix}/${name}` : name;
    if (path === "node_modules") return [];
    return statSync(join(dir, name)).isDirectory() ? filesUnder(join(dir, name), path) : [path];
  });
}

/** Everything the terminals printed so far. */
const printed = () => [...terminals.values()].map((terminal) => terminal.transcript).join("\n");
const exported = new Map<string, string>();

function withPlaceholders(command: string): string {
  const last = (pattern: RegExp) => [...printed().matchAll(pattern)].at(-1)?.[1];
  const filled = command
    .replace(/^export (\w+)=…/gm, (whole, name: string) => {
      const value = exported.get(name);
      if (value === undefined) throw new Error(`${whole}: ${name} was not exported before`);
      return `export ${name}=${value}`;
    })
    .replace(/ses_…/g, () => last(/^session (ses_\w+)/gm) ?? "ses_none_printed")
    .replace(/apr_…/g, () => last(/(apr_[\w-]+)/g) ?? "apr_none_printed");
  const left = /[\w=]…/.exec(filled);
  if (left) throw new Error(`an unknown placeholder in: ${command}`);
  return filled;
}

function commandLine(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, "utf8").replace(/\0/g, " ");
  } catch {
    return "(gone)";
  }
}

/** Wait until nothing the README started runs but the terminals, and nothing answers on its ports. */
async function untilAllStopped(): Promise<string[]> {
  const shells = new Set([...terminals.values()].map((terminal) => terminal.pid));
  const left = async () => [
    ...processesMarked("README_RUN", MARK)
      .filter((pid) => !shells.has(pid))
      .map((pid) => `pid ${pid}: ${commandLine(pid)}`),
    ...(await Promise.all(ports.map(async (port) => ((await answers(port)) ? `port ${port}` : "")))).filter(
      Boolean,
    ),
  ];
  const deadline = Date.now() + 15_000;
  let running = await left();
  while (running.length > 0 && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    running = await left();
  }
  return running;
}

function terminal(number: number): Terminal {
  let found = terminals.get(number);
  if (!found) {
    const env = { ...npxEnv(join(work, "npm-cache")), LANG: "C.UTF-8", README_RUN: MARK };
    found = new Terminal(`terminal ${number}`, copy, env, (line) => {
      const variable = /^__readme_env (\w+)=(.*)$/.exec(line);
      if (variable) exported.set(variable[1] as string, variable[2] as string);
    });
    terminals.set(number, found);
  }
  return found;
}

/** Fails with what the terminals printed, for a command that failed. */
function failure(block: ShellBlock, command: string, why: string): Error {
  const tail = printed().split("\n").slice(-60).join("\n");
  return new Error(`README line ${block.line}: ${why}\n$ ${command}\n--- the terminals printed ---\n${tail}`);
}

function within<T>(promise: Promise<T>, ms: number, why: () => Error): Promise<T> {
  return Promise.race([promise, new Promise<T>((_, reject) => setTimeout(() => reject(why()), ms).unref())]);
}

it.skipIf(cannotRun !== undefined)(
  "runs every sh block of the README, in order, as written",
  { timeout: 600_000 },
  async () => {
    work = mkdtempSync(join(tmpdir(), "brain-readme-"));
    copy = join(work, "repo");
    copyRepository();
    const before = new Set(filesUnder(copy));
    const pending = new Map<number, { block: ShellBlock; command: string; finished: Promise<number> }>();
    const finish = async (number: number) => {
      const running = pending.get(number);
      if (!running) return;
      pending.delete(number);
      const { block, command } = running;
      const status = await within(running.finished, COMMAND_TIMEOUT_MS, () =>
        failure(block, command, "still running"),
      );
      if (status !== 0) throw failure(block, command, `exit ${status}`);
    };

    for (const [index, block] of runnable.entries()) {
      const shell = terminal(block.terminal);
      await finish(block.terminal);
      if (block.once) {
        const text = block.once;
        await within(
          (async () => {
            while (!printed().includes(text)) await new Promise((resolve) => setTimeout(resolve, 100));
          })(),
          COMMAND_TIMEOUT_MS,
          () => failure(block, block.commands[0] ?? "", `"${text}" was never printed`),
        );
      }
      const nextInAnother = (runnable[index + 1]?.terminal ?? block.terminal) !== block.terminal;
      for (const [at, command] of block.commands.entries()) {
        const typed = withPlaceholders(command);
        const names = /^export /.test(typed)
          ? [...typed.matchAll(/\b([A-Z_][A-Z0-9_]*)=/g)].map((m) => m[1])
          : [];
        const report = names.map((name) => `printf '__readme_env %s=%s\\n' ${name} "$${name}";`).join(" ");
        const finished = shell.type(typed, report);
        // the block's last command may wait for the next block, typed into another terminal
        pending.set(block.terminal, { block, command: typed, finished });
        if (at === block.commands.length - 1 && nextInAnother) break;
        await finish(block.terminal);
        if (/^kill\b/.test(typed)) {
          const left = await untilAllStopped();
          if (left.length > 0) throw failure(block, typed, `still running after it:\n${left.join("\n")}`);
        }
      }
    }
    for (const number of [...pending.keys()]) await finish(number);
    expect(await untilAllStopped()).toEqual([]);

    // each Brain had a SQLite file of its own, and said where it was
    const stores = printed()
      .split("\n")
      .flatMap((line) =>
        /"msg":"brain listening"/.test(line) ? [JSON.parse(line.slice(line.indexOf("{"))).path] : [],
      );
    expect(stores.length, printed()).toBeGreaterThanOrEqual(3);
    for (const store of stores) expect(isAbsolute(store) && store.startsWith(copy), store).toBe(true);
    expect(new Set(stores).size, stores.join("\n")).toBe(stores.length);

    // what the commands wrote is ignored by git, and named unlike a service's own config
    const written = filesUnder(copy).filter((path) => !before.has(path));
    expect(written.length).toBeGreaterThan(0);
    const ignored = spawnSync("git", ["-C", ROOT, "check-ignore", "--no-index", "--stdin"], {
      input: written.join("\n"),
      encoding: "utf8",
    });
    if (ignored.error)
      process.stderr.write("git not found: the README's files are not checked against .gitignore\n");
    else expect(written.filter((path) => !ignored.stdout.split("\n").includes(path))).toEqual([]);
    const defaults = ["brain.json", "local-tools.json", "sandbox.json", "storage.json"];
    expect(written.filter((path) => defaults.includes(basename(path)))).toEqual([]);
  },
);
