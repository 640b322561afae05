import { type ChildProcess, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";

/**
 * A shell the README's commands are typed into, one at a time, as a person would: `bash` reading
 * commands on its stdin, without job control (so `kill %1` reaches the job's process only, the
 * harder case), keeping its variables and background jobs from one command to the next.
 */
export class Terminal {
  readonly #shell: ChildProcess;
  readonly #done = `__readme_done_${randomBytes(6).toString("hex")}`;
  #count = 0;
  #waiters = new Map<number, (status: number) => void>();
  /** Everything it printed, stdout and stderr, in order. */
  transcript = "";

  constructor(
    readonly name: string,
    cwd: string,
    env: Record<string, string>,
    /** Called with each complete line it prints. */
    private readonly onLine: (line: string) => void,
  ) {
    this.#shell = spawn("bash", [], { cwd, env, stdio: ["pipe", "pipe", "pipe"] });
    let partial = "";
    const take = (chunk: Buffer) => {
      const text = chunk.toString("utf8");
      this.transcript += text;
      partial += text;
      const lines = partial.split("\n");
      partial = lines.pop() ?? "";
      for (const line of lines) this.#line(line);
    };
    this.#shell.stdout?.on("data", take);
    this.#shell.stderr?.on("data", take);
  }

  get pid(): number {
    return this.#shell.pid as number;
  }

  #line(line: string): void {
    const done = new RegExp(`^${this.#done} (\\d+) (\\d+)$`).exec(line);
    if (!done) {
      this.onLine(line);
      return;
    }
    this.#waiters.get(Number(done[1]))?.(Number(done[2]));
    this.#waiters.delete(Number(done[1]));
  }

  /**
   * Type `command` and resolve with its exit status when it has finished. Its stdin is empty: the
   * next commands are not its input. `after` runs in the shell once it has finished (not counted).
   */
  type(command: string, after = ""): Promise<number> {
    const id = ++this.#count;
    const finished = new Promise<number>((resolve) => this.#waiters.set(id, resolve));
    this.#shell.stdin?.write(
      `{\n${command}\n} </dev/null\n__readme_status=$?; ${after}\nprintf '\\n%s %s %s\\n' ${this.#done} ${id} "$__readme_status"\n`,
    );
    return finished;
  }
}
