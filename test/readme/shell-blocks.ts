/**
 * The `sh` blocks of a Markdown file, as test/readme/commands.test.ts runs them. A comment on the
 * line before a block says how: `<!-- readme-test: skip, WHY -->`, or
 * `<!-- readme-test: terminal 2, once "TEXT" is printed -->` for a block typed into a second
 * terminal once TEXT has appeared in any terminal. Without one, a block runs in terminal 1.
 */
export interface ShellBlock {
  /** The line of its opening fence, counted from 1. */
  line: number;
  text: string;
  /** Why the test does not run it. */
  skip?: string;
  terminal: number;
  /** Run it once this has been printed. */
  once?: string;
  /** Whole commands, in order: a command's continuation lines are part of it. */
  commands: string[];
}

const DIRECTIVE = /^<!--\s*readme-test:\s*(.*?)\s*-->$/;

/** `complete(text)` says whether `text` is one or more whole shell commands (bash -n, say). */
export function shellBlocks(markdown: string, complete: (text: string) => boolean): ShellBlock[] {
  const lines = markdown.split("\n");
  const blocks: ShellBlock[] = [];
  for (let at = 0; at < lines.length; at++) {
    if (lines[at] !== "```sh") continue;
    const end = lines.indexOf("```", at + 1);
    if (end === -1) throw new Error(`the sh block at line ${at + 1} never ends`);
    const body = lines.slice(at + 1, end);
    const directive = DIRECTIVE.exec(lines[at - 1] ?? "")?.[1] ?? "";
    const block: ShellBlock = {
      line: at + 1,
      text: body.join("\n"),
      terminal: Number(/\bterminal (\d+)/.exec(directive)?.[1] ?? 1),
      commands: commandsOf(body, complete, at + 1),
    };
    const skip = /^skip,\s*(.+)$/.exec(directive)?.[1];
    if (skip) block.skip = skip;
    const once = /\bonce "([^"]+)" is printed/.exec(directive)?.[1];
    if (once) block.once = once;
    blocks.push(block);
    at = end;
  }
  return blocks;
}

function commandsOf(lines: string[], complete: (text: string) => boolean, line: number): string[] {
  const commands: string[] = [];
  let pending: string[] = [];
  for (const text of lines) {
    if (pending.length === 0 && text.trim() === "") continue;
    pending.push(text);
    const command = pending.join("\n");
    if (!command.trimEnd().endsWith("\\") && hereDocumentsEnded(pending) && complete(command)) {
      commands.push(command);
      pending = [];
    }
  }
  if (pending.length > 0) throw new Error(`the sh block at line ${line} ends inside a command`);
  return commands;
}

/** Whether every here-document the lines open (`<<'END'`) has its end line (bash -n accepts one without). */
function hereDocumentsEnded(lines: string[]): boolean {
  let ends: string[] = [];
  for (const line of lines) {
    if (ends.length > 0) {
      if (line.replace(/^\t+/, "") === ends[0]) ends = ends.slice(1);
      continue;
    }
    ends = [...line.matchAll(/<<-?\s*(['"]?)(\w+)\1/g)].map((match) => match[2] as string);
  }
  return ends.length === 0;
}
