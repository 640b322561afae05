/**
 * A seeded PRNG (mulberry32): a failing random run can be replayed exactly with its seed, which
 * every test prints in its assertion messages. RELIABILITY_SEED fixes the seed.
 */
export function seededRandom(
  seed = Number(process.env.RELIABILITY_SEED ?? Math.floor(Math.random() * 2 ** 31)),
) {
  let state = seed >>> 0;
  const next = (): number => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 2 ** 32;
  };
  const int = (below: number) => Math.floor(next() * below);
  return {
    seed,
    next,
    int,
    pick: <T>(items: readonly T[]): T => items[int(items.length)] as T,
    bytes: (length: number) => Buffer.from(Array.from({ length }, () => int(256))),
  };
}

export type Random = ReturnType<typeof seededRandom>;
