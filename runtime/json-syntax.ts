/** Where a text stops being JSON, as an editor counts (both from 1), and what was found there. */
export interface JsonSyntaxError {
  line: number;
  column: number;
  problem: string;
}

class Stop {
  constructor(
    readonly at: number,
    readonly expected: string,
  ) {}
}

const ESCAPES = new Set(['"', "\\", "/", "b", "f", "n", "r", "t"]);

/**
 * The first place `text` breaks the JSON grammar (RFC 8259), or undefined when it holds one JSON
 * value. JSON.parse says why only as a character offset, and for some mistakes (a comma before
 * `]`) not where at all; a person fixing a config needs the line and column. Pure.
 */
export function jsonSyntaxError(text: string): JsonSyntaxError | undefined {
  let i = 0;
  const stop = (expected: string): never => {
    throw new Stop(i, expected);
  };
  const space = () => {
    while (i < text.length && " \t\n\r".includes(text.charAt(i))) i++;
  };
  const take = (char: string, expected: string) => {
    if (text[i] !== char) stop(expected);
    i++;
  };
  const digits = (expected: string) => {
    if (!/[0-9]/.test(text.charAt(i))) stop(expected);
    while (/[0-9]/.test(text.charAt(i))) i++;
  };
  const string = (expected: string) => {
    take('"', expected);
    for (;;) {
      if (i >= text.length) stop('a closing "');
      const char = text.charAt(i);
      if (char === '"') break;
      if (char < " ") stop('a closing " (a line end or tab inside a string is written \\n or \\t)');
      if (char === "\\") {
        i++;
        if (text[i] === "u") {
          for (let k = 1; k <= 4; k++) {
            if (!/[0-9a-fA-F]/.test(text.charAt(i + k))) {
              i += k;
              stop("four hexadecimal digits after \\u");
            }
          }
          i += 4;
        } else if (!ESCAPES.has(text.charAt(i))) {
          stop('an escape: \\" \\\\ \\/ \\b \\f \\n \\r \\t or \\uXXXX');
        }
      }
      i++;
    }
    i++;
  };
  // the members of an object or the elements of an array, between `{` or `[` and `close`
  const items = (close: string, item: () => void) => {
    i++;
    space();
    if (text[i] === close) {
      i++;
      return;
    }
    for (;;) {
      item();
      space();
      if (text[i] === close) break;
      take(",", `',' or '${close}'`);
      space();
    }
    i++;
  };
  const member = () => {
    string("a property name in double quotes");
    space();
    take(":", "':' after the property name");
    space();
    value();
  };
  const value = (): void => {
    const char = text.charAt(i);
    if (char === "{") {
      items("}", member);
    } else if (char === "[") {
      items("]", value);
    } else if (char === '"') {
      string("a value");
    } else if (char === "-" || /[0-9]/.test(char)) {
      if (char === "-") i++;
      if (text[i] === "0") i++;
      else digits("a digit");
      if (text[i] === ".") {
        i++;
        digits("a digit after the decimal point");
      }
      if (text[i] === "e" || text[i] === "E") {
        i++;
        if (text[i] === "+" || text[i] === "-") i++;
        digits("a digit in the exponent");
      }
    } else {
      const literal = ["true", "false", "null"].find((word) => text.startsWith(word, i));
      if (!literal) stop("a value");
      i += (literal as string).length;
    }
  };
  try {
    space();
    value();
    space();
    if (i < text.length) stop("the end of the text");
    return undefined;
  } catch (error) {
    if (error instanceof Stop) return located(text, error);
    // nested deeper than the stack: JSON.parse's own words will have to do
    if (error instanceof RangeError) return undefined;
    throw error;
  }
}

function located(text: string, { at, expected }: Stop): JsonSyntaxError {
  const before = text.slice(0, at);
  const lineStart = before.lastIndexOf("\n") + 1;
  return {
    line: before.split("\n").length,
    column: [...before.slice(lineStart)].length + 1,
    problem:
      at >= text.length
        ? `the text ends where ${expected} should be`
        : `found ${described(text.codePointAt(at) as number)} where ${expected} should be`,
  };
}

function described(code: number): string {
  const char = String.fromCodePoint(code);
  if (char === "\n") return "a line end";
  if (char === "\t") return "a tab";
  if (code > 0x20 && code < 0x7f) return `'${char}'`;
  return `U+${code.toString(16).toUpperCase().padStart(4, "0")}`;
}
