/**
 * `items.map(each)`, as an array whose elements kind does not depend on V8's tier. TurboFan's
 * inlined `Array.prototype.map` makes a holey array where the builtin that unoptimized code calls
 * makes a packed one: a function of the turn loop that was optimized or deoptimized began handing
 * out arrays of another map, and every optimized function that read them deoptimized ("wrong map")
 * and was compiled again, over and over (BENCHMARKS.md, "Arrays of one kind whatever V8's tier").
 * Arrays that pass between the turn loop's functions are made with this; a push-built array is
 * packed in every tier.
 */
export function packedMap<T, U>(items: readonly T[], each: (item: T, index: number) => U): U[] {
  const mapped: U[] = [];
  for (let index = 0; index < items.length; index++) mapped.push(each(items[index] as T, index));
  return mapped;
}
