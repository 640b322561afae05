import { Type } from "@sinclair/typebox";
import { defineTool } from "../../kit/index.js";

export const echoTool = defineTool({
  name: "echo",
  description: "Echo the given text back. Useful to check that tools work.",
  input: Type.Object({ text: Type.String({ maxLength: 65_536 }) }, { additionalProperties: false }),
  handler: ({ text }) => text,
});
