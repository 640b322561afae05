import { inspect } from "node:util";

/**
 * A value that must never reach a log, an event, an error or a response. Serializing or
 * inspecting it gives "[redacted]"; only `reveal()` returns the value, at the point of use.
 */
export class Secret {
  readonly #value: string;

  constructor(value: string) {
    this.#value = value;
  }

  reveal(): string {
    return this.#value;
  }

  toJSON(): string {
    return "[redacted]";
  }

  toString(): string {
    return "[redacted]";
  }

  [inspect.custom](): string {
    return "[redacted]";
  }
}
