import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:https";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startBrainProcess } from "../helpers/brain-process.js";
import { type ForwardProxy, startForwardProxy } from "../helpers/proxy.js";
import { selfSignedCertificate } from "../helpers/tls.js";
import { runTurn } from "../helpers/turns.js";

let certificate: ReturnType<typeof selfSignedCertificate>;
const dir = mkdtempSync(join(tmpdir(), "https-proxy-"));
const certPath = join(dir, "cert.pem");
let tls: Server;
let proxy: ForwardProxy;
let toolUrl = "";

beforeAll(async () => {
  // a certificate for 127.0.0.1 that Brain trusts through NODE_EXTRA_CA_CERTS, as an operator would
  certificate = selfSignedCertificate();
  writeFileSync(certPath, certificate.cert);
  tls = createServer({ key: certificate.key, cert: certificate.cert }, (req, res) => {
    req.resume();
    req.on("end", () => {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify({ content: [{ type: "text", text: "over tls" }] }));
    });
  });
  await new Promise<void>((resolve) => tls.listen(0, "127.0.0.1", resolve));
  toolUrl = `https://127.0.0.1:${(tls.address() as AddressInfo).port}/tools/secure`;
  proxy = await startForwardProxy();
});

afterAll(async () => {
  await proxy?.close();
  await new Promise<void>((resolve) => tls?.close(() => resolve()));
  rmSync(dir, { recursive: true, force: true });
});

async function callThrough(env: Record<string, string>) {
  const brain = await startBrainProcess(
    {
      tools: [
        {
          name: "secure",
          description: "s",
          input_schema: { type: "object" },
          url: toolUrl,
          tenants: ["acme"],
        },
      ],
    },
    { NODE_EXTRA_CA_CERTS: certPath, ...env },
  );
  try {
    const client = brain.client();
    const session = await client.createSession({
      tools: ["secure"],
      script: [{ tool_calls: [{ name: "secure", arguments: {} }] }, { text: "x" }],
    });
    const events = await runTurn(client, session.id, "go");
    return events.find((e) => e.type === "tool.result")?.data;
  } finally {
    await brain.stop();
  }
}

describe("HTTPS_PROXY", () => {
  it("tunnels an https tool call through the proxy", async () => {
    const before = proxy.carried.length;
    expect(await callThrough({ HTTPS_PROXY: proxy.url })).toMatchObject({
      is_error: false,
      content: [{ text: "over tls" }],
    });
    expect(proxy.carried.slice(before)).toEqual([`CONNECT ${new URL(toolUrl).host}`]);
  });

  it("is not used when NO_PROXY covers the host", async () => {
    const before = proxy.carried.length;
    expect(await callThrough({ HTTPS_PROXY: proxy.url, NO_PROXY: "127.0.0.1" })).toMatchObject({
      is_error: false,
    });
    expect(proxy.carried.length).toBe(before);
  });
});
