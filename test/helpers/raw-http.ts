import { connect } from "node:net";
import { setTimeout as sleep } from "node:timers/promises";

/**
 * What the server at `url` sends back for `text` written on a raw connection, until it closes:
 * for requests an HTTP client would not send (no Host header, a target that is no URL).
 */
export function exchangeRaw(url: string, text: string): Promise<string> {
  return exchangeInPieces(url, [Buffer.from(text)]);
}

/**
 * The same, with `pieces` written one by one, each in its own segment 50 ms apart: a body split
 * where the test chooses (inside a character, say), or one that goes on after the server answered.
 */
export function exchangeInPieces(url: string, pieces: readonly Buffer[]): Promise<string> {
  const { hostname, port } = new URL(url);
  return new Promise<string>((resolve, reject) => {
    const socket = connect(Number(port), hostname);
    socket.setNoDelay(true);
    const received: Buffer[] = [];
    socket.on("data", (chunk) => received.push(chunk));
    // joined as bytes, then decoded: a character split across two chunks stays whole
    socket.on("close", () => resolve(Buffer.concat(received).toString("utf8")));
    socket.on("error", reject);
    socket.once("connect", async () => {
      for (const piece of pieces) {
        socket.write(piece);
        await sleep(50);
      }
    });
  });
}

/** The JSON body of a raw reply. */
export function rawJsonBody(reply: string): { error: { code: string; message: string } } {
  return JSON.parse(reply.slice(reply.indexOf("\r\n\r\n") + 4));
}
