import { describe, expect, it } from "vitest";
import type { ToolBinding } from "../config/load.js";
import { classifyError } from "./classify-error.js";

const binding = { timeoutMs: 10_000 } as ToolBinding;
const socketError = (code: string) => Object.assign(new Error(`socket: ${code}`), { code });
const classified = (error: unknown, written: boolean) => {
  const failure = classifyError(error, { abortReason: undefined, written }, binding);
  return { code: failure.code, unknown_outcome: failure.unknownOutcome };
};

describe("classifyError", () => {
  it("takes a connection that could not be made for unreachable: the tool did not run", () => {
    for (const code of ["ECONNREFUSED", "EHOSTUNREACH", "ERR_SSL_WRONG_VERSION_NUMBER"]) {
      expect(classified(socketError(code), false)).toEqual({ code: "unreachable", unknown_outcome: false });
    }
    expect(classified(new Error("Proxy response (407) !== 200 when HTTP Tunneling"), false)).toEqual({
      code: "unreachable",
      unknown_outcome: false,
    });
  });

  it("takes any break after the request went out for connection_lost, whatever the socket says", () => {
    for (const error of [
      socketError("EHOSTUNREACH"),
      socketError("ERR_SSL_DECRYPTION_FAILED_OR_BAD_RECORD_MAC"),
      new Error("the proxy closed the connection"),
      socketError("UND_ERR_SOCKET"),
    ]) {
      expect(classified(error, true)).toEqual({ code: "connection_lost", unknown_outcome: true });
    }
  });
});
