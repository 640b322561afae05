// Summarize a V8 CPU profile (from `npm run bench -- --cpu-prof DIR`): where Brain's time went,
// by function and by file, self time. Run: node dist/bench/profile-top.js FILE.cpuprofile [N]
import { readFileSync } from "node:fs";

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  hitCount?: number;
}

interface Profile {
  nodes: ProfileNode[];
  startTime: number;
  endTime: number;
  samples: number[];
  timeDeltas: number[];
}

/** Self time per function and per file, as shares of the samples. */
export function selfTimes(profile: Profile) {
  const byNode = new Map(profile.nodes.map((node) => [node.id, node]));
  const micros = new Map<number, number>();
  for (const [i, id] of profile.samples.entries()) {
    micros.set(id, (micros.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0));
  }
  const total = [...micros.values()].reduce((a, b) => a + b, 0);
  const functions = new Map<string, number>();
  const files = new Map<string, number>();
  for (const [id, time] of micros) {
    const frame = byNode.get(id)?.callFrame;
    if (!frame) continue;
    const file = shortUrl(frame.url) || `(${frame.functionName || "native"})`;
    const name = `${frame.functionName || "(anonymous)"} ${file}${frame.url ? `:${frame.lineNumber + 1}` : ""}`;
    functions.set(name, (functions.get(name) ?? 0) + time);
    files.set(file, (files.get(file) ?? 0) + time);
  }
  const top = (map: Map<string, number>) =>
    [...map].sort((a, b) => b[1] - a[1]).map(([name, time]) => ({ name, share: time / total }));
  return { totalMs: total / 1000, functions: top(functions), files: top(files) };
}

function shortUrl(url: string): string {
  return url
    .replace(/^file:\/\/.*?\/node_modules\//, "")
    .replace(/^file:\/\/.*?\/dist\//, "")
    .replace(/^node:/, "node:");
}

if (process.argv[1]?.endsWith("profile-top.js")) {
  const [file, count = "25"] = process.argv.slice(2);
  if (!file) {
    process.stderr.write("usage: node dist/bench/profile-top.js FILE.cpuprofile [N]\n");
    process.exit(2);
  }
  const summary = selfTimes(JSON.parse(readFileSync(file, "utf8")) as Profile);
  const print = (title: string, rows: { name: string; share: number }[]) => {
    process.stdout.write(`${title}\n`);
    for (const row of rows.slice(0, Number(count)))
      process.stdout.write(`  ${(row.share * 100).toFixed(1).padStart(5)}%  ${row.name}\n`);
  };
  process.stdout.write(`${file}: ${summary.totalMs.toFixed(0)} ms sampled\n`);
  print("self time by file", summary.files);
  print("self time by function", summary.functions);
}
