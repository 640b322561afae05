import { randomBytes } from "node:crypto";
import { createServer, type IncomingHttpHeaders, request, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";

export interface ForwardedRequest {
  method: string;
  /** The URL's path, decoded: `/bucket/key` in path style. */
  path: string;
  headers: IncomingHttpHeaders;
  /** The error code the forward answered with instead of passing the request on. */
  refusedWith?: string;
}

/** An error answer as S3 sends one: its status, and the code and message of its XML body. */
export interface S3ErrorAnswer {
  status: number;
  code: string;
  message: string;
  /** For a 412: the header whose condition did not hold. */
  condition?: "If-Match" | "If-None-Match";
}

/** S3's answer to a conditional write or delete whose condition does not hold. */
export const preconditionFailed = (condition: "If-Match" | "If-None-Match"): S3ErrorAnswer => ({
  status: 412,
  code: "PreconditionFailed",
  message: "At least one of the pre-conditions you specified did not hold",
  condition,
});

/** S3's answer to a conditional write that raced another conditional write of the same key. */
export const conditionalRequestConflict: S3ErrorAnswer = {
  status: 409,
  code: "ConditionalRequestConflict",
  message:
    "A conflicting conditional operation is currently in progress against this resource. Please try again.",
};

export interface S3Forward {
  /** Give this to the S3 client in place of the store's endpoint. */
  endpoint: string;
  /** Every request that arrived, in order, refused ones too. */
  requests: ForwardedRequest[];
  /** Answer the next request that `matches` accepts with `answer`, instead of passing it on. */
  refuseNext: (matches: (request: ForwardedRequest) => boolean, answer: S3ErrorAnswer) => void;
  stop: () => Promise<void>;
}

/**
 * A loopback forward in front of a real S3-compatible server, for what that server cannot show:
 * which headers the S3 client sends, and how it takes an answer only AWS S3 gives (s3rver ignores
 * conditional writes, so it never answers 412). Requests pass through byte for byte, Host
 * included, so their signatures still hold at the server.
 */
export async function startS3Forward(target: string): Promise<S3Forward> {
  const upstream = new URL(target);
  const requests: ForwardedRequest[] = [];
  const refusals: { matches: (request: ForwardedRequest) => boolean; answer: S3ErrorAnswer }[] = [];
  const sockets = new Set<Socket>();

  const server = createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://forward");
    const seen: ForwardedRequest = {
      method: req.method ?? "",
      path: decodeURIComponent(url.pathname),
      headers: req.headers,
    };
    requests.push(seen);
    const refusal = refusals.find((candidate) => candidate.matches(seen));
    if (refusal) {
      refusals.splice(refusals.indexOf(refusal), 1);
      seen.refusedWith = refusal.answer.code;
      // S3 reads the body before it answers; answering mid-upload would reset the client's socket
      req.resume();
      req.once("end", () => sendError(res, refusal.answer));
      return;
    }
    // the client's "Expect: 100-continue" was answered here already; it is never signed
    const { expect: _, ...headers } = req.headers;
    const forwarded = request(
      { host: upstream.hostname, port: upstream.port, method: req.method, path: req.url, headers },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    forwarded.on("error", () => res.destroy());
    req.pipe(forwarded);
  });
  server.on("connection", (socket) => {
    sockets.add(socket);
    socket.once("close", () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));

  return {
    endpoint: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests,
    refuseNext: (matches, answer) => {
      refusals.push({ matches, answer });
    },
    stop: async () => {
      // the S3 client keeps its connections alive: close them, or close() waits for them
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** S3's error wire format: the status, its request-id headers, and an XML `Error` document. */
function sendError(res: ServerResponse, answer: S3ErrorAnswer): void {
  const requestId = randomBytes(8).toString("hex").toUpperCase();
  const hostId = randomBytes(56).toString("base64");
  const condition = answer.condition === undefined ? "" : `<Condition>${answer.condition}</Condition>`;
  const body =
    `<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>${answer.code}</Code>` +
    `<Message>${answer.message}</Message>${condition}` +
    `<RequestId>${requestId}</RequestId><HostId>${hostId}</HostId></Error>`;
  res.writeHead(answer.status, {
    "content-type": "application/xml",
    "content-length": Buffer.byteLength(body),
    "x-amz-request-id": requestId,
    "x-amz-id-2": hostId,
    server: "AmazonS3",
  });
  res.end(body);
}
