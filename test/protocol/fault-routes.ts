import type { ServerResponse } from "node:http";
import { type ReceivedCall, sendJson, type ToolRoute, textResult } from "../helpers/tool-service.js";

/** A route's expected outcome: the error code Brain must record, or "ok". */
export interface Fault {
  path: string;
  route: ToolRoute;
  code: string | "ok";
  unknownOutcome: boolean;
  /** Extra binding fields this fault needs (output_schema, tight limits). */
  binding?: Record<string, unknown>;
}

const sse = (res: ServerResponse) => res.writeHead(200, { "content-type": "text/event-stream" });
const never = () => new Promise<void>(() => {});

/**
 * A tool service that injects every fault of docs/protocol.md, one route each. The protocol tests use
 * each route once; the reliability soak picks them at random.
 */
export const FAULTS: Fault[] = [
  {
    path: "/ok-json",
    code: "ok",
    unknownOutcome: false,
    route: (_, res) => sendJson(res, textResult("fine")),
  },
  {
    path: "/ok-sse",
    code: "ok",
    unknownOutcome: false,
    route: (_, res) => {
      sse(res);
      res.write(": a comment line, ignored\n\n");
      res.write('event: progress\ndata: {"step":1}\n\n');
      res.write('event: result\r\ndata: {"content":[{"type":"text","text":"streamed"}]}\r\n\r\n');
      res.end();
    },
  },
  {
    path: "/ok-after-early-hints",
    code: "ok",
    unknownOutcome: false,
    route: async (_, res) => {
      res.writeEarlyHints({ link: "</manual>; rel=preload" });
      await new Promise((resolve) => setTimeout(resolve, 50));
      sendJson(res, textResult("after a 103"));
    },
  },
  ...[401, 403, 404, 413, 429].map((status) => ({
    path: `/status-${status}`,
    code: "http_status",
    unknownOutcome: false,
    route: (_: ReceivedCall, res: ServerResponse) => sendJson(res, { error: "refused" }, status),
  })),
  ...[500, 502, 503].map((status) => ({
    path: `/status-${status}`,
    code: "http_status",
    unknownOutcome: true,
    route: (_: ReceivedCall, res: ServerResponse) => sendJson(res, { error: "broke" }, status),
  })),
  ...[301, 302, 307, 308].map((status) => ({
    path: `/redirect-${status}`,
    code: "redirect",
    unknownOutcome: true,
    route: (_: ReceivedCall, res: ServerResponse) => {
      res.writeHead(status, { location: "/redirect-target" }).end();
    },
  })),
  {
    // the status decides; an error body that trickles must not hold the call to its time limit
    path: "/status-400-trickling",
    code: "http_status",
    unknownOutcome: false,
    binding: { timeout_seconds: 3 },
    route: async (_, res) => {
      res.writeHead(400, { "content-type": "text/plain" });
      const timer = setInterval(() => res.write("."), 200);
      res.on("close", () => clearInterval(timer));
      await never();
    },
  },
  {
    path: "/no-headers",
    code: "headers_timeout",
    unknownOutcome: true,
    route: never,
  },
  {
    path: "/stalls-after-headers",
    code: "timeout",
    unknownOutcome: true,
    binding: { timeout_seconds: 1.5 },
    route: async (_, res) => {
      sse(res);
      res.write('event: progress\ndata: {"working":true}\n\n');
      await never();
    },
  },
  {
    path: "/reset-before-headers",
    code: "connection_lost",
    unknownOutcome: true,
    route: (_, res) => {
      res.socket?.destroy();
    },
  },
  {
    path: "/reset-mid-body",
    code: "connection_lost",
    unknownOutcome: true,
    route: (_, res) => {
      res.writeHead(200, { "content-type": "application/json", "content-length": "1000" });
      res.write('{"content": [');
      setTimeout(() => res.socket?.destroy(), 10);
    },
  },
  ...(
    [
      ["/not-json", "application/json", "this is not json"],
      ["/wrong-content-type", "text/plain", JSON.stringify(textResult("hi"))],
      ["/no-content-type", "", JSON.stringify(textResult("hi"))],
      ["/unknown-field", "application/json", JSON.stringify({ ...textResult("hi"), extra: 1 })],
      [
        "/unknown-content-type",
        "application/json",
        JSON.stringify({ content: [{ type: "video", data: "x" }] }),
      ],
      [
        "/content-item-extra-field",
        "application/json",
        JSON.stringify({ content: [{ type: "text", text: "x", lang: "en" }] }),
      ],
      ["/empty-result", "application/json", "{}"],
      // ten thousand wrong items: refused as fast as one, with one problem named, not 100,000
      ["/many-bad-items", "application/json", JSON.stringify({ content: Array(10_000).fill({ type: "x" }) })],
      ["/result-not-object", "application/json", "[1, 2]"],
      ["/sse-no-result", "text/event-stream", 'event: progress\ndata: {"a":1}\n\n'],
      ["/sse-unknown-event", "text/event-stream", 'event: partial\ndata: {"a":1}\n\n'],
      ["/sse-unnamed-event", "text/event-stream", 'data: {"content":[]}\n\n'],
      ["/sse-bad-progress", "text/event-stream", "event: progress\ndata: {not json\n\n"],
      ["/sse-bad-result-json", "text/event-stream", "event: result\ndata: {oops\n\n"],
    ] as const
  ).map(([path, type, body]) => ({
    path,
    code: "invalid_result",
    unknownOutcome: true,
    route: (_: ReceivedCall, res: ServerResponse) => {
      res.writeHead(200, type ? { "content-type": type } : {});
      res.end(body);
    },
  })),
  {
    path: "/status-600",
    code: "invalid_result",
    unknownOutcome: true,
    route: (_, res) => sendJson(res, textResult("beyond HTTP"), 600),
  },
  {
    path: "/status-201",
    code: "invalid_result",
    unknownOutcome: true,
    route: (_, res) => sendJson(res, textResult("created"), 201),
  },
  {
    path: "/output-schema-fails",
    code: "invalid_result",
    unknownOutcome: true,
    binding: {
      output_schema: { type: "object", required: ["count"], properties: { count: { type: "integer" } } },
    },
    route: (_, res) => sendJson(res, { structured_content: { count: "three" } }),
  },
  {
    // 1e400 parses as Infinity, which passes { type: "number" } and would be stored as null
    path: "/infinite-number",
    code: "invalid_result",
    unknownOutcome: true,
    binding: { output_schema: { type: "object", properties: { n: { type: "number" } } } },
    route: (_, res) => {
      res.writeHead(200, { "content-type": "application/json" });
      res.end('{"structured_content": {"n": 1e400}}');
    },
  },
  {
    path: "/output-schema-ok",
    code: "ok",
    unknownOutcome: false,
    binding: {
      output_schema: { type: "object", required: ["count"], properties: { count: { type: "integer" } } },
    },
    route: (_, res) =>
      sendJson(res, { content: [{ type: "text", text: "3" }], structured_content: { count: 3 } }),
  },
  {
    path: "/error-result-skips-output-schema",
    code: "tool_error",
    unknownOutcome: false,
    binding: { output_schema: { type: "object", required: ["count"] } },
    route: (_, res) => sendJson(res, { content: [{ type: "text", text: "disk full" }], is_error: true }),
  },
  {
    path: "/error-result-keeps-content-checks",
    code: "invalid_result",
    unknownOutcome: true,
    binding: { output_schema: { type: "object", required: ["count"] } },
    route: (_, res) => sendJson(res, { content: [{ type: "video" }], is_error: true }),
  },
  {
    path: "/big-json",
    code: "output_too_large",
    unknownOutcome: true,
    binding: { max_output_bytes: 1024 },
    route: (_, res) => sendJson(res, textResult("x".repeat(4096))),
  },
  {
    path: "/big-sse-result",
    code: "output_too_large",
    unknownOutcome: true,
    binding: { max_output_bytes: 1024 },
    route: (_, res) => {
      sse(res);
      res.end(`event: result\ndata: ${JSON.stringify(textResult("y".repeat(4096)))}\n\n`);
    },
  },
  {
    path: "/big-progress",
    code: "output_too_large",
    unknownOutcome: true,
    route: (_, res) => {
      sse(res);
      res.end(`event: progress\ndata: ${JSON.stringify({ blob: "z".repeat(100_000) })}\n\n`);
    },
  },
  {
    // the event-stream rules allow data before the event line; the progress cap still holds
    path: "/big-progress-data-first",
    code: "output_too_large",
    unknownOutcome: true,
    route: (_, res) => {
      sse(res);
      res.end(`data: ${JSON.stringify({ blob: "z".repeat(100_000) })}\nevent: progress\n\n`);
    },
  },
];
