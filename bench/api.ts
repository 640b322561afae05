import type { Dispatcher } from "undici";

/**
 * One call of Brain's API over an undici dispatcher: the load generator's client, lighter than
 * fetch (BrainClient) so that under load it measures Brain, not itself.
 */
export async function callApi<T>(
  dispatcher: Dispatcher,
  brain: { url: string; key: string },
  method: "GET" | "POST" | "DELETE",
  path: string,
  body?: unknown,
): Promise<T> {
  const response = await dispatcher.request({
    origin: new URL(brain.url).origin,
    path,
    method,
    headers: {
      authorization: `Bearer ${brain.key}`,
      ...(body !== undefined && { "content-type": "application/json" }),
    },
    ...(body !== undefined && { body: JSON.stringify(body) }),
  });
  const text = await response.body.text();
  if (response.statusCode >= 400) {
    throw new Error(`${method} ${path} answered ${response.statusCode}: ${text.slice(0, 300)}`);
  }
  return JSON.parse(text) as T;
}

export const createSession = (dispatcher: Dispatcher, brain: { url: string; key: string }, system?: string) =>
  callApi<{ id: string }>(dispatcher, brain, "POST", "/sessions", {
    config: { tools: ["echo"], ...(system !== undefined && { system }) },
  });

export const sendMessage = (dispatcher: Dispatcher, brain: { url: string; key: string }, id: string) =>
  callApi<{ seq: number }>(dispatcher, brain, "POST", `/sessions/${id}/messages`, { content: "go" });
