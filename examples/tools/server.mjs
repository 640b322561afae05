// The example tool service of the product page: one tool, echo, in plain Node.js.
// The protocol is docs/protocol.md. GET /tools lists the tool for `brain tools config`.
// Run: BRAIN_TOOLS_KEY=secret node examples/tools/server.mjs   (PORT=0 picks a free port)
import { createHash, timingSafeEqual } from "node:crypto";
import http from "node:http";

const token = process.env.BRAIN_TOOLS_KEY;
if (!token) {
  console.error("set BRAIN_TOOLS_KEY to the token Brain sends (the binding's token_env)");
  process.exit(2);
}
const port = Number(process.env.PORT ?? 8081);
const MAX_BODY_BYTES = 1024 * 1024;

// Compare digests, not the headers: timingSafeEqual then takes the same time whatever was sent,
// so a caller cannot find the token byte by byte (docs/protocol.md, Security).
const sha256 = (value) => createHash("sha256").update(value).digest();
const expected = sha256(`Bearer ${token}`);
const authorized = (req) => timingSafeEqual(sha256(req.headers.authorization ?? ""), expected);

const echo = {
  name: "echo",
  description: "Echo text through an external tool service.",
  input_schema: {
    type: "object",
    properties: { text: { type: "string", maxLength: 4096 } },
    required: ["text"],
    additionalProperties: false,
  },
};

const sendJson = (res, status, value) =>
  res.writeHead(status, { "Content-Type": "application/json" }).end(JSON.stringify(value));
const refuse = (res, status, code, message) => sendJson(res, status, { error: { code, message } });
const isObject = (value) => typeof value === "object" && value !== null && !Array.isArray(value);
const tooLarge = (res) => {
  // the rest of the body stays unread: close the connection rather than read it as a request
  res.setHeader("Connection", "close");
  refuse(res, 413, "payload_too_large", `the body exceeds ${MAX_BODY_BYTES} bytes`);
};

async function handle(req, res) {
  if (!authorized(req)) {
    res.writeHead(401).end();
    return;
  }
  if (req.method === "GET" && req.url === "/tools") {
    sendJson(res, 200, { tools: [echo] });
    return;
  }
  if (req.method !== "POST" || req.url !== "/tools/echo") {
    res.writeHead(404, { "Content-Type": "text/plain" }).end("no such tool");
    return;
  }
  // Brain always sends Content-Length: refuse before reading a byte
  if (Number(req.headers["content-length"]) > MAX_BODY_BYTES) return tooLarge(res);
  const chunks = [];
  let size = 0;
  for await (const chunk of req) {
    size += chunk.length;
    // stop reading here: past the limit nothing can be valid
    if (size > MAX_BODY_BYTES) return tooLarge(res);
    chunks.push(chunk);
  }
  let call;
  try {
    // joined as bytes, then decoded: a character split across two chunks stays whole
    call = JSON.parse(Buffer.concat(chunks, size).toString("utf8"));
  } catch {
    refuse(res, 400, "invalid_request", "the body is not JSON");
    return;
  }
  const { tenant_id, session_id, call_id, arguments: args } = isObject(call) ? call : {};
  if (
    typeof tenant_id !== "string" ||
    typeof session_id !== "string" ||
    typeof call_id !== "string" ||
    !isObject(args)
  ) {
    const message = "the body must be a JSON object with tenant_id, session_id, call_id and arguments";
    refuse(res, 400, "invalid_request", message);
    return;
  }
  // Authorize with tenant_id and session_id. Log call_id to match Brain's tool.call event.
  if (process.env.ECHO_LOG) console.log(JSON.stringify({ tenant_id, session_id, call_id }));
  if (typeof args.text !== "string") {
    // refused arguments are the tool's answer, not an HTTP error: the model reads it and can retry
    sendJson(res, 200, { content: [{ type: "text", text: "echo needs text, a string" }], is_error: true });
    return;
  }
  sendJson(res, 200, { content: [{ type: "text", text: args.text }] });
}

// A caller that drops the connection mid-body makes the read throw: end that request, not the
// service (an async handler's rejection nobody catches would stop the whole process).
const server = http.createServer((req, res) => handle(req, res).catch(() => res.destroy()));

server.listen(port, "127.0.0.1", () => {
  console.log(`echo tool service listening on http://127.0.0.1:${server.address().port}`);
});
for (const signal of ["SIGINT", "SIGTERM"]) process.on(signal, () => server.close(() => process.exit(0)));
