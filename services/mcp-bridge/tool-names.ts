import { createHash } from "node:crypto";

/** One MCP tool as the bridge names it: the server it comes from (its key in the config) and its own name. */
export interface McpToolName {
  server: string;
  /** The server's prefix; "" serves its tools under their own names. */
  prefix: string;
  name: string;
}

export interface BrainNames {
  /** Brain's name for each tool, in the order given. */
  names: string[];
  /** One line for each tool not served under `{prefix}_{name}`, saying why: the bridge logs them. */
  renamed: string[];
}

const MAX_NAME = 64;
const UNFIT = /[^a-zA-Z0-9_-]/g;

const joined = (prefix: string, name: string) => (prefix === "" ? name : `${prefix}_${name}`);

function hashed(candidate: string, tool: McpToolName, length: number): string {
  const digest = createHash("sha256").update(`${tool.server}\0${tool.name}`).digest("hex").slice(0, length);
  return `${candidate.slice(0, MAX_NAME - length - 1)}_${digest}`;
}

/**
 * Brain's names (`^[a-zA-Z0-9_-]{1,64}$`) for MCP tools: `{prefix}_{name}` where that is one and no
 * other tool's; otherwise the name with its unfit characters replaced by `_`, cut to fit, and a
 * digest of the server and the MCP name appended, so every tool keeps a name of its own. The
 * names depend on the set of tools only, never on their order, so a restart or a re-listing serves
 * each tool under the same name; two tools whose names clash are both renamed, neither dropped.
 */
export function brainToolNames(tools: readonly McpToolName[]): BrainNames {
  const candidates = tools.map((tool) => joined(tool.prefix, tool.name.replace(UNFIT, "_")));
  const count = new Map<string, number>();
  for (const candidate of candidates) count.set(candidate, (count.get(candidate) ?? 0) + 1);
  const reasons = tools.map((tool, i) => {
    const candidate = candidates[i] as string;
    if (candidate !== joined(tool.prefix, tool.name))
      return "its name holds characters a Brain tool name cannot";
    if (candidate.length > MAX_NAME) return `${candidate} is longer than ${MAX_NAME} characters`;
    if ((count.get(candidate) ?? 0) > 1) return `${candidate} would be another tool's name too`;
    return undefined;
  });
  const names = tools.map((tool, i) =>
    reasons[i] === undefined ? (candidates[i] as string) : hashed(candidates[i] as string, tool, 8),
  );
  // a digest that lands on another tool's name is lengthened until none does
  for (let length = 16; duplicates(names).size > 0; length *= 2) {
    const clashing = duplicates(names);
    if (length > 32) throw new Error(`tool names still clash: ${[...clashing].join(", ")}`);
    names.forEach((name, i) => {
      if (clashing.has(name) && reasons[i] !== undefined) {
        names[i] = hashed(candidates[i] as string, tools[i] as McpToolName, length);
      }
    });
  }
  const renamed = tools.flatMap((tool, i) =>
    reasons[i] === undefined
      ? []
      : [`tool "${tool.name}" of server "${tool.server}" is served as ${names[i]}: ${reasons[i]}`],
  );
  return { names, renamed };
}

function duplicates(names: readonly string[]): Set<string> {
  const seen = new Set<string>();
  const twice = new Set<string>();
  for (const name of names) (seen.has(name) ? twice : seen).add(name);
  return twice;
}
