import type { Logger } from "../telemetry/logger.js";
import type { ModelReply, ModelRequest } from "./provider.js";
import { AttemptError, type AttemptFailure, attemptFailure } from "./provider-failure.js";
import type { ProviderSettings } from "./provider-settings.js";
import { withRetries } from "./retry.js";
import { streamedAttempt } from "./streamed-attempt.js";

/** Folds one provider's stream events into a reply (anthropic-stream.ts, openai-stream.ts). */
export interface StreamFold<Event> {
  /** Take one event; returns the text it adds, if any. */
  push(event: Event): string | undefined;
  /** About how large the reply is so far: its text, its tool calls and their arguments. */
  readonly size: number;
  /** The reply, once the stream has ended; throws when it ended early. */
  finish(): ModelReply;
}

export interface StreamedCall<Event> {
  request: ModelRequest;
  settings: ProviderSettings;
  /** Send the request through the SDK and return its event stream, aborted by `signal`. */
  open: (signal: AbortSignal) => Promise<AsyncIterable<Event>>;
  newFold: () => StreamFold<Event>;
  judge: (error: unknown) => AttemptFailure;
  /** The model entry's name, for the log. */
  model: string;
  /** The provider's logger, for a request that brings none of its own. */
  logger: Logger | undefined;
}

/**
 * Far more than any max_tokens gives (a token is a few bytes), so only a provider that ignores
 * max_tokens, or one that never ends a stream, reaches it before the turn's memory does.
 */
const MAX_REPLY_SIZE = 16 * 1024 * 1024;
/** What each tool call adds to a fold's size beyond its strings. */
export const TOOL_CALL_SIZE = 64;

function tooLarge(): AttemptError {
  return new AttemptError(
    attemptFailure(
      "provider_bad_response",
      `the model's reply passed ${MAX_REPLY_SIZE / 1024 / 1024} MiB without ending; check the model entry's max_tokens`,
    ),
  );
}

/**
 * One model call, the same for every provider: each attempt streams, gives its text out live as
 * it comes, and folds the events into a reply; failed attempts are retried as the policy says.
 */
export function completeStreamed<Event>(call: StreamedCall<Event>): Promise<ModelReply> {
  const { request, settings } = call;
  let attempts = 0;
  const attempt = () => {
    const number = ++attempts;
    return streamedAttempt(request.signal, settings.idleMs, async ({ signal, touch }) => {
      const stream = await call.open(signal);
      const fold = call.newFold();
      for await (const event of stream) {
        touch();
        const text = fold.push(event);
        if (fold.size > MAX_REPLY_SIZE) throw tooLarge();
        if (text) request.onDelta(text, number);
      }
      return fold.finish();
    });
  };
  return withRetries(attempt, {
    policy: settings.retry,
    signal: request.signal,
    judge: call.judge,
    onRetry: (failure, waitMs, attempt) => {
      (request.logger ?? call.logger)?.warn(
        { model: call.model, session_id: request.session.id, code: failure.code, attempt, wait_ms: waitMs },
        `model call failed, retrying: ${failure.message}`,
      );
      request.onRetry?.(attempt, failure.code, waitMs);
    },
  });
}
