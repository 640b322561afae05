// Runs an MCP server over stdio and appends every line it receives on stdin to a file, so a test
// sees what reached the server (a notifications/cancelled, say). Usage: stdin-tap.mjs LOG COMMAND ARGS…
import { spawn } from "node:child_process";
import { appendFileSync } from "node:fs";
import { createInterface } from "node:readline";

const [log, command, ...args] = process.argv.slice(2);
const child = spawn(command, args, { stdio: ["pipe", "inherit", "inherit"] });
createInterface({ input: process.stdin })
  .on("line", (line) => {
    appendFileSync(log, `${line}\n`);
    child.stdin.write(`${line}\n`);
  })
  .on("close", () => child.stdin.end());
child.on("exit", (code) => process.exit(code ?? 1));
process.on("SIGTERM", () => child.kill("SIGTERM"));
