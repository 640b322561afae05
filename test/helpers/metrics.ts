/** A series' value on a Brain's `/metrics` now, or undefined when it has no such line. */
export async function metricSample(brain: { url: string }, series: string): Promise<number | undefined> {
  const text = await (await fetch(`${brain.url}/metrics`)).text();
  const line = text.split("\n").find((candidate) => candidate.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.split(" ")[1]);
}
