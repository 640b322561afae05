const HELP = `brain tools — work with tool services

Usage:
  brain tools check URL [options]     check the tool at URL against the tool protocol
  brain tools config URL [options]    print a host config whose bindings are the service's tools

Run \`brain tools check --help\` or \`brain tools config --help\` for their options.`;

const SUBCOMMANDS: Record<string, () => Promise<{ run: (args: string[]) => Promise<number> }>> = {
  check: () => import("./tools-check-command.js"),
  config: () => import("./tools-config-command.js"),
};

export async function run(args: string[]): Promise<number> {
  const [name, ...rest] = args;
  const load = name !== undefined && Object.hasOwn(SUBCOMMANDS, name) ? SUBCOMMANDS[name] : undefined;
  if (load) return (await load()).run(rest);
  if (name === "--help" || name === "-h" || name === "-help") {
    process.stdout.write(`${HELP}\n`);
    return 0;
  }
  process.stderr.write(
    `${name === undefined ? "brain tools: a subcommand is required" : `brain tools: unknown subcommand "${name}"`}\n\n${HELP}\n`,
  );
  return 2;
}
