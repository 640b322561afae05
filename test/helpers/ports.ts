import { type AddressInfo, connect, createServer, type Socket } from "node:net";
import { startProcess } from "./processes.js";

/** A loopback port that was free a moment ago, so that nothing listens there: for refused connections. */
export async function closedPort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, "127.0.0.1", resolve));
  const { port } = probe.address() as AddressInfo;
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return port;
}

/**
 * A loopback port where connecting hangs, as with a host that drops packets: a child process
 * listens with a backlog of 1 and never accepts (its event loop is blocked), and connections from here fill its accept queue, so the kernel drops every further SYN.
 */
export async function hangingPort(): Promise<{ port: number; close: () => Promise<void> }> {
  const listener = await startProcess(
    [
      "-e",
      `const server = require("node:net").createServer();
       server.listen({ port: 0, host: "127.0.0.1", backlog: 1 }, () => {
         console.log(server.address().port);
         Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0);
       });`,
    ],
    {},
    (line) => Number(line) || undefined,
  );
  const port = listener.ready;
  const fillers: Socket[] = [];
  // fill the accept queue until a connection no longer completes
  for (let attempt = 0; attempt < 16; attempt++) {
    const socket = connect(port, "127.0.0.1");
    fillers.push(socket);
    const connected = await new Promise<boolean>((resolve) => {
      const timer = setTimeout(() => resolve(false), 300);
      socket.once("connect", () => {
        clearTimeout(timer);
        resolve(true);
      });
    });
    if (!connected) break;
  }
  return {
    port,
    close: async () => {
      for (const socket of fillers) socket.destroy();
      await listener.stop("SIGKILL");
    },
  };
}
