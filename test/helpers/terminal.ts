import { execFile } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";

const run = promisify(execFile);

/** A program running in a real pseudo-terminal (tmux), typed at and read as a person would. */
export interface Terminal {
  /** What the terminal shows, with the lines scrolled off kept. */
  screen: () => Promise<string>;
  /** Type text and press Enter. */
  type: (line: string) => Promise<void>;
  /** Press keys by tmux's names: "C-c", "C-d", "Enter". */
  press: (...keys: string[]) => Promise<void>;
  close: () => Promise<void>;
}

/**
 * Start `command` in a tmux session of its own (a server on a socket in a folder of its own, so it
 * never meets a person's tmux), with only `env` and PATH in its environment.
 */
export async function startTerminal(command: string[], env: Record<string, string>): Promise<Terminal> {
  const dir = mkdtempSync(join(tmpdir(), "brain-tty-"));
  const socket = join(dir, "tmux.sock");
  const tmux = (...args: string[]) =>
    run("tmux", ["-S", socket, ...args], {
      env: { PATH: process.env.PATH ?? "", TERM: "xterm-256color", TMPDIR: tmpdir(), ...env },
      timeout: 10_000,
    });
  await tmux("new-session", "-d", "-x", "160", "-y", "50", "--", ...command);
  // the pane stays after the program ends, so what it printed last can still be read
  await tmux("set-option", "-g", "remain-on-exit", "on");
  return {
    screen: async () => (await tmux("capture-pane", "-p", "-J", "-S", "-1000")).stdout,
    type: async (line) => {
      await tmux("send-keys", "-l", line);
      await tmux("send-keys", "Enter");
    },
    press: async (...keys) => {
      await tmux("send-keys", ...keys);
    },
    close: async () => {
      await tmux("kill-server").catch(() => undefined);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
