import { connect } from "node:net";

/**
 * What the server at `url` sends back for `text` written on a raw connection, until it closes:
 * for requests an HTTP client would not send (no Host header, a target that is no URL).
 */
export function exchangeRaw(url: string, text: string): Promise<string> {
  const { hostname, port } = new URL(url);
  return new Promise<string>((resolve, reject) => {
    const socket = connect(Number(port), hostname, () => socket.write(text));
    let received = "";
    socket.on("data", (chunk) => {
      received += chunk;
    });
    socket.on("close", () => resolve(received));
    socket.on("error", reject);
  });
}

/** The JSON body of a raw reply. */
export function rawJsonBody(reply: string): { error: { code: string; message: string } } {
  return JSON.parse(reply.slice(reply.indexOf("\r\n\r\n") + 4));
}
