/** What a tool may be called: in a binding, a session's tools, a service's tool list and a model's call. */
export const TOOL_NAME_PATTERN = "^[a-zA-Z0-9_-]{1,64}$";
