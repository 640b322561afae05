// The example tool service of the product page: one tool, echo, in plain Node.js.
// The protocol is docs/protocol.md. GET /tools lists the tool for `brain tools config`.
// Run: BRAIN_TOOLS_KEY=secret node examples/tools/server.mjs   (PORT=0 picks a free port)
import http from "node:http";

const token = process.env.BRAIN_TOOLS_KEY;
if (!token) {
  console.error("set BRAIN_TOOLS_KEY to the token Brain sends (the binding's token_env)");
  process.exit(2);
}
const port = Number(process.env.PORT ?? 8081);

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

const server = http.createServer(async (req, res) => {
  if (req.headers.authorization !== `Bearer ${token}`) {
    res.writeHead(401).end();
    return;
  }
  if (req.method === "GET" && req.url === "/tools") {
    res.writeHead(200, { "Content-Type": "application/json" }).end(JSON.stringify({ tools: [echo] }));
    return;
  }
  if (req.method !== "POST" || req.url !== "/tools/echo") {
    res.writeHead(404, { "Content-Type": "text/plain" }).end("no such tool");
    return;
  }
  let body = "";
  for await (const chunk of req) body += chunk;
  let call;
  try {
    call = JSON.parse(body);
  } catch {
    res.writeHead(400, { "Content-Type": "text/plain" }).end("the body is not JSON");
    return;
  }
  const { tenant_id, session_id, call_id, arguments: args } = call;
  // Authorize with tenant_id and session_id. Log call_id to match Brain's tool.call event.
  if (process.env.ECHO_LOG) console.log(JSON.stringify({ tenant_id, session_id, call_id }));
  res.writeHead(200, { "Content-Type": "application/json" });
  res.end(JSON.stringify({ content: [{ type: "text", text: args?.text ?? "" }] }));
});

server.listen(port, "127.0.0.1", () => {
  console.log(`echo tool service listening on http://127.0.0.1:${server.address().port}`);
});
for (const signal of ["SIGINT", "SIGTERM"]) process.on(signal, () => server.close(() => process.exit(0)));
