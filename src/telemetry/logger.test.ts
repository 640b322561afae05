import { Writable } from "node:stream";
import { describe, expect, it } from "vitest";
import { Secret } from "../../runtime/secret.js";
import { createLogger } from "./logger.js";

/** A real logger writing to memory, flushed: every line it wrote. */
function logged(write: (logger: ReturnType<typeof createLogger>) => void): string {
  const chunks: string[] = [];
  const destination = new Writable({
    write(chunk, _encoding, callback) {
      chunks.push(String(chunk));
      callback();
    },
  });
  const logger = createLogger("debug", destination);
  write(logger);
  logger.flush();
  return chunks.join("");
}

describe("Brain's logger", () => {
  it("redacts every field that carries a secret, at the top and one level down", () => {
    const secrets = Array.from({ length: 16 }, (_, index) => `secret-value-${index}-x9`);
    const text = logged((logger) => {
      logger.warn(
        {
          authorization: `Bearer ${secrets[0]}`,
          headers: {
            authorization: `Bearer ${secrets[1]}`,
            cookie: secrets[2],
            "x-api-key": secrets[3],
            "proxy-authorization": secrets[4],
          },
          inspection_token: secrets[5],
          token: secrets[6],
          api_key: secrets[7],
          password: secrets[8],
          secret: secrets[9],
          request: {
            authorization: secrets[10],
            headers: { authorization: secrets[11], cookie: secrets[12] },
            token: secrets[13],
            password: secrets[14],
          },
          key: new Secret(secrets[15] as string),
        },
        "a line with every secret Brain holds",
      );
    });
    for (const secret of secrets) expect(text).not.toContain(secret);
    expect(text).toContain("[redacted]");
    expect(JSON.parse(text).headers).toEqual({
      authorization: "[redacted]",
      cookie: "[redacted]",
      "x-api-key": "[redacted]",
      "proxy-authorization": "[redacted]",
    });
  });

  it("keeps what is no secret", () => {
    const text = logged((logger) => logger.info({ session_id: "ses_1", route: "/sessions/{id}" }, "kept"));
    expect(JSON.parse(text)).toMatchObject({ session_id: "ses_1", route: "/sessions/{id}", msg: "kept" });
  });
});
