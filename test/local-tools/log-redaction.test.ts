import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Type } from "@sinclair/typebox";
import { afterAll, beforeAll, expect, it } from "vitest";
import { defineTool } from "../../kit/index.js";
import { resolveLocalToolsConfig } from "../../services/local-tools/config.js";
import { type RunningLocalTools, startLocalTools } from "../../services/local-tools/service.js";
import { captureLog } from "../helpers/captured-log.js";
import { envelope, postCall } from "../kit/kit-service.js";

const token = `tools-${randomBytes(12).toString("hex")}`;
const operatorToken = `operator-${randomBytes(12).toString("hex")}`;
const upstreamKey = `upstream-${randomBytes(12).toString("hex")}`;
const log = captureLog();
let dir: string;
let tools: RunningLocalTools;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "local-tools-log-"));
  const resolved = resolveLocalToolsConfig(
    { listen: "127.0.0.1:0", log_level: "debug" },
    { LOCAL_TOOLS_KEY: token, LOCAL_TOOLS_OPERATOR_KEY: operatorToken },
    dir,
  );
  if (!resolved.ok) throw new Error(resolved.problems.join("\n"));
  // the service's own logger, as main.ts starts it, writing here instead of stdout
  tools = await startLocalTools(resolved.config, log.destination);
});
afterAll(async () => {
  await tools?.close();
  rmSync(dir, { recursive: true, force: true });
});

it("logs no token, not even one carried by what a tool throws", async () => {
  // a tool that forwards the call upstream, as a gateway does, and throws what its HTTP client threw:
  // the request it sent (Brain's bearer token and its own key) and the answer's cookie
  const forward = defineTool({
    name: "forward",
    description: "Forwards the call upstream.",
    input: Type.Object({}),
    handler: () => {
      throw Object.assign(new Error("Request failed with status code 502"), {
        config: { headers: { Authorization: `Bearer ${token}`, "X-Api-Key": upstreamKey } },
        response: { status: 502, headers: { "set-cookie": [`operator=${operatorToken}`] } },
      });
    },
  });
  tools.service.setTools([forward]);
  const url = `${tools.url}/tools/forward`;
  expect((await postCall(url, envelope({}), { token })).status).toBe(200);
  expect((await postCall(url, envelope({}), { token: operatorToken })).status).toBe(401);
  tools.logger.flush();

  const text = log.text();
  expect(text).toContain("the handler threw");
  expect(text).toContain("[redacted]");
  for (const secret of [token, operatorToken, upstreamKey]) expect(text).not.toContain(secret);
});
