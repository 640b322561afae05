import { isDeepStrictEqual } from "node:util";
import { checkResultObject } from "../../protocol/result.js";
import { mediaTypeOf } from "../media-type.js";
import type { Exchange } from "./exchange.js";

/** The requests the checker sends; the rules judge what came back. */
export interface Observation {
  /** A well-formed call with the token. */
  call: Exchange;
  /** The same call without an Authorization header. */
  noToken: Exchange;
  /** The same call with a wrong bearer token. */
  wrongToken: Exchange;
  /** The binding's output_schema, when the checker was given one: success results must match it. */
  validateOutput?: ((value: unknown) => boolean) | undefined;
  /**
   * Where the service's tool list says the tool honours Idempotency-Key: the well-formed call sent
   * again with the same key.
   */
  repeat?: Exchange | undefined;
}

export type Verdict = { pass: boolean; why: string };

export interface Rule {
  id: string;
  /** What a conforming service does, in one line. */
  says: string;
  judge: (seen: Observation) => Verdict;
}

const pass = (why: string): Verdict => ({ pass: true, why });
const fail = (why: string): Verdict => ({ pass: false, why });

function statusText(exchange: Exchange): string {
  if (exchange.failure) return exchange.failure;
  const status = exchange.status as number;
  if (status >= 300 && status < 400) {
    return `answered ${status}, a redirect${exchange.location ? ` to ${exchange.location}` : ""}, which Brain never follows`;
  }
  return `answered ${status}`;
}

function mediaType(exchange: Exchange): string {
  return mediaTypeOf(exchange.contentType).toLowerCase();
}

/** The result the well-formed call produced: the JSON body, or the first result event's data. */
function resultText(call: Exchange): string | undefined {
  if (call.status !== 200) return undefined;
  if (call.stream) return call.stream.events.find((event) => event.event === "result")?.data;
  if (mediaType(call) === "application/json") return call.json?.text;
  return undefined;
}

/**
 * Whether two answers carry the same result: as JSON values, so that a result kept and sent again
 * by another serializer (its keys in another order, other whitespace) is the same one.
 */
function sameResult(first: string | undefined, again: string): boolean {
  if (first === again) return true;
  if (first === undefined) return false;
  try {
    return isDeepStrictEqual(JSON.parse(first), JSON.parse(again));
  } catch {
    return false;
  }
}

function judgeResult({ call, validateOutput }: Observation): Verdict {
  if (call.cut) return fail(call.cut);
  const text = resultText(call);
  if (text === undefined) return fail("there is no result to judge (see the rules above)");
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    return fail(`the result is not valid JSON: ${JSON.stringify(text.slice(0, 80))}`);
  }
  const checked = checkResultObject(raw, validateOutput);
  if ("problem" in checked) return fail(checked.problem);
  const items = checked.content.map((item) => item.type).join(", ") || "no content items";
  const matched = validateOutput && !checked.is_error ? ", matching the output schema" : "";
  return pass(
    `a valid result object (${items}${checked.structured_content ? ", structured_content" : ""}${checked.is_error ? ", is_error" : ""}${matched})`,
  );
}

function expect401(exchange: Exchange, what: string): Verdict {
  if (exchange.status === 401) return pass(`answered 401 to a call ${what}`);
  return fail(`${statusText(exchange)} to a call ${what}; expected 401`);
}

/**
 * The rules of the tool protocol (docs/protocol.md) that can be checked from outside, in order. One
 * list: `brain tools check` applies it to any service, and our own services' tests run it.
 */
export const TOOL_SERVICE_RULES: readonly Rule[] = [
  {
    id: "status",
    says: "a well-formed call is answered 200, in time, without a redirect",
    judge: ({ call }) => {
      if (call.status === 200) return pass(`answered 200, headers after ${call.headersMs} ms`);
      const hint = call.status === 401 ? " to the call with the token: is it the right one?" : "";
      return fail(`${statusText(call)}${hint}`);
    },
  },
  {
    id: "content-type",
    says: "the answer is application/json or text/event-stream",
    judge: ({ call }) => {
      if (call.status !== 200) return fail("no 200 answer to judge");
      const type = mediaType(call);
      return type === "application/json" || type === "text/event-stream"
        ? pass(type)
        : fail(`content type "${call.contentType}"; expected application/json or text/event-stream`);
    },
  },
  {
    id: "sse-framing",
    says: "an event stream has only progress and result events, each progress data JSON",
    judge: ({ call }) => {
      if (!call.stream) return pass("not an event stream");
      const names = [...new Set(call.stream.events.map((event) => event.event))];
      const unknown = names.filter((name) => name !== "progress" && name !== "result");
      if (unknown.length > 0)
        return fail(`unknown event names: ${unknown.map((n) => JSON.stringify(n)).join(", ")}`);
      const progress = call.stream.events.filter((event) => event.event === "progress");
      const bad = progress.findIndex((event) => !isJson(event.data));
      if (bad !== -1)
        return fail(
          `progress event ${bad + 1} is not valid JSON: ${JSON.stringify(progress[bad]?.data.slice(0, 80))}`,
        );
      if (call.cut && /progress/.test(call.cut)) return fail(call.cut);
      return pass(`${progress.length} progress events, ${call.stream.comments} comment lines`);
    },
  },
  {
    id: "one-result",
    says: "an event stream ends with exactly one result event, and nothing after it",
    judge: ({ call }) => {
      if (!call.stream) return pass("not an event stream");
      const events = call.stream.events;
      const results = events.filter((event) => event.event === "result").length;
      if (results === 0) return fail(call.cut ?? "the stream ended without a result event");
      if (results > 1) return fail(`${results} result events; send exactly one`);
      if (events.at(-1)?.event !== "result") return fail("events follow the result event");
      if (!call.stream.endedAfterResult)
        return fail("the stream stayed open after its result; end the response");
      return pass("one result event, then the end of the response");
    },
  },
  {
    id: "result",
    says: "the result is a valid result object (a success's structured_content matching the output schema)",
    judge: judgeResult,
  },
  {
    id: "idempotency",
    says: "a tool whose tool list says idempotent answers a call sent again with the same Idempotency-Key with the same result",
    judge: ({ call, repeat }) => {
      if (!repeat)
        return pass("the tool list does not say idempotent: nothing to check (Brain sends each call once)");
      const first = resultText(call);
      const again = resultText(repeat);
      if (again === undefined)
        return fail(`the call sent again with the same Idempotency-Key: ${statusText(repeat)}, no result`);
      return sameResult(first, again)
        ? pass("the call sent again with the same Idempotency-Key got the same result")
        : fail(
            "the call sent again with the same Idempotency-Key got another result: the tool says idempotent but is not",
          );
    },
  },
  {
    id: "auth-missing",
    says: "a call without a bearer token is refused with 401",
    judge: ({ noToken }) => expect401(noToken, "without a token"),
  },
  {
    id: "auth-wrong",
    says: "a call with a wrong bearer token is refused with 401",
    judge: ({ wrongToken }) => expect401(wrongToken, "with a wrong token"),
  },
];

function isJson(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}
