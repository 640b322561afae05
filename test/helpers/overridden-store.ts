/**
 * `store` with some of its methods in place of its own, each made from the store's own method
 * (bound to the store, whose methods use its private fields); the rest as they are. What a test
 * needs to make a real store fail, or hold, where a networked database could.
 */
export function overridden<S extends object>(
  store: S,
  replacements: {
    [K in keyof S]?: S[K] extends (...args: infer A) => infer R
      ? (own: (...args: A) => R) => (...args: A) => R
      : never;
  },
): S {
  return new Proxy(store, {
    get(target, name) {
      const own = Reflect.get(target, name);
      if (typeof own !== "function") return own;
      const bound = own.bind(target);
      const replace = replacements[name as keyof S] as ((own: unknown) => unknown) | undefined;
      return replace ? replace(bound) : bound;
    },
  });
}
