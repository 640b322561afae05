/**
 * The protocol: every shape that crosses the wire between Brain, its clients and its tool
 * services, as a schema with its type derived from it, and every code enum. Imported by Brain,
 * the tool kit, the services, the client and the console; it imports nothing of theirs, and nothing
 * of Node, so it runs in browsers too.
 */
export * from "./catalog.js";
export * from "./errors.js";
export * from "./events.js";
export * from "./manifest.js";
export * from "./outcomes.js";
export * from "./result.js";
export * from "./script.js";
export * from "./session.js";
export * from "./sse.js";
export * from "./tool-names.js";
export * from "./turn-failures.js";
export { check, compile, describeErrors, type Validator } from "./validation.js";
