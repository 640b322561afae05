import type { Language } from "./config.js";

/** A program per language that prints "ok" when the interpreter runs inside the sandbox. */
export const PROBES: Record<Language, string> = {
  bash: "echo ok",
  python: "print('ok')",
  node: "console.log('ok')",
};

/** What to tell the operator when bwrap fails to set a sandbox up here. Pure. */
export function probeAdvice(stderr: string): string {
  const lines = [`bubblewrap could not start a sandbox on this host: ${stderr.trim() || "no message"}`];
  if (/namespace|Operation not permitted|setting up uid map|No permissions/i.test(stderr)) {
    lines.push(
      "The sandbox needs user namespaces: on Debian and Ubuntu check `sysctl kernel.unprivileged_userns_clone` " +
        "(1) and `kernel.apparmor_restrict_unprivileged_userns` (0); in a container, allow unshare/clone " +
        "(a seccomp profile that permits them) or run it privileged.",
    );
  }
  if (/No such file|not found/i.test(stderr)) {
    lines.push("Install bubblewrap (Debian: `apt-get install -y bubblewrap`) and util-linux's prlimit.");
  }
  return lines.join("\n");
}
