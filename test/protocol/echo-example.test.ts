import { connect } from "node:net";
import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type StartedProcess, startEchoService } from "../helpers/processes.js";
import { exchangeInPieces, exchangeRaw } from "../helpers/raw-http.js";

// examples/tools/server.mjs against the request rules of docs/protocol.md: every malformed body
// gets its answer, and none stops the service.
const TOKEN = "echo-example-token-5e6f";
let echo: StartedProcess & { ready: string };

beforeAll(async () => {
  echo = await startEchoService(TOKEN);
});

afterAll(async () => {
  await echo?.stop();
});

/** A POST to /tools/echo as Brain writes it, closing the connection after the answer. */
function post(body: string | Buffer, token = TOKEN): Buffer {
  const head = [
    "POST /tools/echo HTTP/1.1",
    "Host: 127.0.0.1",
    "Content-Type: application/json",
    `Authorization: Bearer ${token}`,
    `Content-Length: ${Buffer.byteLength(body)}`,
    "Connection: close",
    "",
    "",
  ].join("\r\n");
  return Buffer.concat([Buffer.from(head), Buffer.from(body)]);
}

const call = (args: unknown) =>
  JSON.stringify({ tenant_id: "acme", session_id: "ses_1", call_id: "call_1", arguments: args });
const status = (reply: string) => Number(reply.slice(9, 12));

/** The JSON body of a raw reply, which Node sends chunked. */
function jsonBody(reply: string) {
  let rest = reply.slice(reply.indexOf("\r\n\r\n") + 4);
  let body = "";
  for (let size = Number.parseInt(rest, 16); size > 0; size = Number.parseInt(rest, 16)) {
    const start = rest.indexOf("\r\n") + 2;
    body += rest.slice(start, start + size);
    rest = rest.slice(start + size + 2);
  }
  return JSON.parse(body);
}

async function stillAnswers(): Promise<void> {
  const reply = await exchangeRaw(echo.ready, post(call({ text: "alive" })).toString());
  expect(status(reply)).toBe(200);
  expect(echo.child.exitCode).toBeNull();
}

describe("examples/tools/server.mjs", () => {
  it.each([
    ["null", "null"],
    ["an array", "[1]"],
    ["a string", '"x"'],
    ["an empty object", "{}"],
    ["no arguments", JSON.stringify({ tenant_id: "acme", session_id: "ses_1", call_id: "call_1" })],
    ["arguments not an object", call([1])],
    ["no call_id", JSON.stringify({ tenant_id: "acme", session_id: "ses_1", arguments: { text: "x" } })],
    ["not JSON", "{not json"],
  ])("answers 400 with a JSON error to a body that is %s, and keeps serving", async (_, body) => {
    const reply = await exchangeRaw(echo.ready, post(body).toString());
    expect(status(reply)).toBe(400);
    expect(jsonBody(reply).error.code).toBe("invalid_request");
    await stillAnswers();
  });

  it("answers refused arguments with a result whose is_error is true", async () => {
    const reply = await exchangeRaw(echo.ready, post(call({ text: 5 })).toString());
    expect(status(reply)).toBe(200);
    expect(jsonBody(reply)).toMatchObject({ is_error: true });
  });

  it("decodes a character split across two TCP segments whole", async () => {
    const request = post(call({ text: "héllo" }));
    const middle = request.indexOf(Buffer.from("é")) + 1; // between the two bytes of é
    const reply = await exchangeInPieces(echo.ready, [request.subarray(0, middle), request.subarray(middle)]);
    expect(status(reply)).toBe(200);
    expect(jsonBody(reply).content[0].text).toBe("héllo");
  });

  it("refuses a body over 1 MiB with 413, by its Content-Length or as it is read", async () => {
    const announced = [
      "POST /tools/echo HTTP/1.1",
      "Host: 127.0.0.1",
      `Authorization: Bearer ${TOKEN}`,
      `Content-Length: ${1024 * 1024 + 1}`,
      "",
      "",
    ].join("\r\n");
    const refused = await exchangeInPieces(echo.ready, [Buffer.from(announced)]);
    expect(status(refused)).toBe(413);
    expect(jsonBody(refused).error.code).toBe("payload_too_large");

    const chunked = [
      "POST /tools/echo HTTP/1.1",
      "Host: 127.0.0.1",
      `Authorization: Bearer ${TOKEN}`,
      "Transfer-Encoding: chunked",
      "",
      `${(1024 * 1024 + 1).toString(16)}\r\n`,
    ].join("\r\n");
    // the chunk and no end: the service must answer from what it has read
    const read = await exchangeInPieces(echo.ready, [
      Buffer.from(chunked),
      Buffer.alloc(1024 * 1024 + 1, "a"),
    ]);
    expect(status(read)).toBe(413);
    await stillAnswers();
  });

  it("keeps serving when a caller drops the connection mid-body", async () => {
    const socket = connect(Number(new URL(echo.ready).port), "127.0.0.1");
    await new Promise((resolve) => socket.once("connect", resolve));
    socket.write(post(call({ text: "never finished" })).subarray(0, -5));
    await sleep(50);
    socket.destroy();
    await sleep(50);
    await stillAnswers();
  });

  it("answers 401 to a wrong token of any length", async () => {
    for (const token of ["x", `${TOKEN}-and-more`, ""]) {
      expect(status(await exchangeRaw(echo.ready, post(call({ text: "x" }), token).toString()))).toBe(401);
    }
    await stillAnswers();
  });
});
