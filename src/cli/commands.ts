/**
 * The `brain` subcommands besides serving. Each lives in its own file, loaded only when run, so
 * one command's dependencies never slow another's start. Add a command by adding an entry here.
 */
export interface Command {
  /** One line for `brain --help`. */
  usage: string;
  summary: string;
  load: () => Promise<{ run: (args: string[]) => Promise<number> }>;
}

export const COMMANDS: Record<string, Command> = {
  chat: {
    usage: "brain chat [--session ID] [--tools a,b]",
    summary: "talk to a new or resumed session from a terminal, its turns shown live",
    load: () => import("./chat-command.js"),
  },
  schema: {
    usage: "brain schema",
    summary: "print the host config's JSON Schema",
    load: () => import("./schema-command.js"),
  },
  tools: {
    usage: "brain tools check|config URL",
    summary: "check a tool service against the protocol; print a host config for one",
    load: () => import("./tools-command.js"),
  },
  script: {
    usage: "brain script SESSION_ID [--out FILE]",
    summary: "print a stored session's model steps as a scripted-model script, or write a recording",
    load: () => import("./script-command.js"),
  },
  replay: {
    usage: "brain replay SESSION_ID|FILE --model M",
    summary: "replay a stored session or a recording with scripted model M, and compare",
    load: () => import("./replay-command.js"),
  },
};
