import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

/**
 * The peer: an MCP SDK client, a session of its own for each round. Its transport leaves an abort
 * listener per call on one signal until GC (Node's fetch), and Node warns past 1,500 of them;
 * a session per round keeps the peer as it is used, without that pile-up.
 */
export function mcpClient(serverUrl: string) {
  return {
    session: async <T>(use: (call: () => Promise<unknown>) => Promise<T>): Promise<T> => {
      const client = new Client({ name: "brain-bench", version: "1.0.0" });
      await client.connect(new StreamableHTTPClientTransport(new URL(serverUrl)));
      try {
        return await use(() => client.callTool({ name: "echo", arguments: { text: "hello" } }));
      } finally {
        await client.close();
      }
    },
  };
}
