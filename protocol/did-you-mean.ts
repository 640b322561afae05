/**
 * The names one edit away from `word` (a letter added, dropped, changed, or two neighbours
 * swapped): what a person most likely meant by a name nobody knows. Pure.
 */
export function oneEditAway(word: string, names: Iterable<string>): string[] {
  return [...names].filter((name) => name !== word && isOneEdit(word, name));
}

/** `names` as a hint to end a message with: ` (did you mean "a"?)`, or "" when there is none. */
export function didYouMean(word: string, names: Iterable<string>): string {
  const near = oneEditAway(word, names);
  return near.length === 0 ? "" : `; did you mean ${near.map((name) => JSON.stringify(name)).join(" or ")}?`;
}

function isOneEdit(a: string, b: string): boolean {
  if (Math.abs(a.length - b.length) > 1) return false;
  let start = 0;
  while (start < a.length && a[start] === b[start]) start++;
  let endA = a.length;
  let endB = b.length;
  while (endA > start && endB > start && a[endA - 1] === b[endB - 1]) {
    endA--;
    endB--;
  }
  const restA = a.slice(start, endA);
  const restB = b.slice(start, endB);
  // what differs, once the common start and end are set aside, is one letter or two swapped
  if (restA.length <= 1 && restB.length <= 1) return true;
  return restA.length === 2 && restB.length === 2 && restA[0] === restB[1] && restA[1] === restB[0];
}
