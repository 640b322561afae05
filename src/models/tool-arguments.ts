/**
 * Tool-call arguments as the model gave them: parsed when they are JSON, else the raw text, which
 * then fails the tool's input_schema with an `invalid_arguments` result the model can read and
 * correct — better than failing the turn over a model's typo.
 */
export function parseArguments(json: string): unknown {
  try {
    return JSON.parse(json);
  } catch {
    return json;
  }
}
