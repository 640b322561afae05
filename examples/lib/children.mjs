// The processes an example starts, each stopped when the example ends: `start` resolves with what
// the process's first fitting stdout line says (its URL), `stopAll` stops every one.
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";

export const root = join(dirname(fileURLToPath(import.meta.url)), "../..");

/** Exit with a hint when Brain is not built: the examples run it from dist/. */
export function requireBuild() {
  if (!existsSync(join(root, "dist/src/client/client.js"))) {
    console.error("Brain is not built: run `npm ci` (it builds), or `npm run build`.");
    process.exit(1);
  }
}

export class Children {
  #children = [];

  constructor(env) {
    this.env = env;
  }

  /** Start `node args…` and resolve with the first stdout line `pick` accepts. */
  start(name, args, extraEnv, pick) {
    const child = spawn(process.execPath, args, {
      cwd: root,
      env: { ...this.env, ...extraEnv },
      stdio: ["ignore", "pipe", "inherit"],
    });
    this.#children.push(child);
    return new Promise((resolve, reject) => {
      child.once("exit", (code) => reject(new Error(`${name} exited with code ${code} before it was ready`)));
      createInterface({ input: child.stdout }).on("line", (line) => {
        const found = pick(line);
        if (found) resolve(found);
      });
    });
  }

  /** Brain, from its `brain listening` log line. */
  startBrain(name, configPath, extraEnv = {}) {
    return this.start(name, ["dist/src/cli/main.js", "-config", configPath], extraEnv, (line) => {
      try {
        const entry = JSON.parse(line);
        return entry.msg === "brain listening" ? entry.url : undefined;
      } catch {
        return undefined;
      }
    });
  }

  /** The example echo service on a free port. */
  startEcho() {
    return this.start(
      "echo service",
      ["examples/tools/server.mjs"],
      { PORT: "0" },
      (line) => line.match(/listening on (\S+)/)?.[1],
    );
  }

  async stopAll() {
    await Promise.all(
      this.#children.map(
        (child) =>
          new Promise((resolve) => {
            if (child.exitCode !== null) return resolve();
            child.once("exit", resolve);
            child.kill("SIGTERM");
          }),
      ),
    );
  }
}
