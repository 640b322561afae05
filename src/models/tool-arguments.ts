import { unstorable } from "../../protocol/storable-json.js";

/**
 * Tool-call arguments as the model gave them: parsed when they are JSON Brain can store as it
 * came, else the raw text, which then fails the tool's input_schema with an `invalid_arguments`
 * result the model can read and correct — better than failing the turn over a model's typo. JSON
 * that parses but cannot be stored (a number such as 1e400, which parses as Infinity and would be
 * stored and sent as null; nesting past what JSON.stringify survives) is kept as its text too.
 */
export function parseArguments(json: string): unknown {
  let parsed: unknown;
  try {
    parsed = JSON.parse(json);
  } catch {
    return json;
  }
  return unstorable(parsed) === undefined ? parsed : json;
}
