import { Pool } from "undici";

/**
 * The raw limit: the POST Brain sends for an echo call, sent by undici's Pool with nothing around
 * it; `call` resolves to the whole answer's text.
 */
export function rawClient(origin: string, path: string, token: string) {
  const pool = new Pool(origin, { connections: 1 });
  const body = JSON.stringify({
    tenant_id: "bench",
    session_id: "ses_bench",
    call_id: "call_bench",
    arguments: { text: "hello" },
  });
  const headers = {
    "content-type": "application/json",
    accept: "application/json, text/event-stream",
    authorization: `Bearer ${token}`,
  };
  return {
    call: async (): Promise<string> => {
      const response = await pool.request({ path, method: "POST", headers, body });
      return response.body.text();
    },
    close: () => pool.close(),
  };
}
