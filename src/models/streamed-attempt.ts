import { AttemptError, attemptFailure } from "./provider-failure.js";

export interface Attempt {
  /** Aborts the SDK's request: on interrupt, or when the provider stays silent too long. */
  signal: AbortSignal;
  /** Call on every event received: the silence limit counts from the last one. */
  touch: () => void;
}

/**
 * One attempt of a streamed model call, bounded by silence rather than by total time: a long
 * answer may take minutes, but a provider that sends nothing for `idleMs` — before the response
 * starts or between two events — has stalled. The SDKs end a stream quietly when it is aborted,
 * so whatever `run` returns after an abort is discarded for the abort's own error.
 */
export async function streamedAttempt<T>(
  turnSignal: AbortSignal,
  idleMs: number,
  run: (attempt: Attempt) => Promise<T>,
): Promise<T> {
  const controller = new AbortController();
  const timedOut = new AttemptError(
    attemptFailure(
      "provider_timeout",
      `the model provider sent nothing for ${idleMs / 1000} s (timeout_seconds)`,
    ),
  );
  const onInterrupt = () => controller.abort(turnSignal.reason);
  turnSignal.addEventListener("abort", onInterrupt, { once: true });
  if (turnSignal.aborted) onInterrupt();
  let timer: NodeJS.Timeout | undefined;
  const touch = () => {
    clearTimeout(timer);
    timer = setTimeout(() => controller.abort(timedOut), idleMs);
  };
  touch();
  try {
    const value = await run({ signal: controller.signal, touch });
    if (controller.signal.aborted) throw controller.signal.reason;
    return value;
  } catch (error) {
    if (!turnSignal.aborted && controller.signal.reason === timedOut) throw timedOut;
    throw error;
  } finally {
    clearTimeout(timer);
    turnSignal.removeEventListener("abort", onInterrupt);
  }
}
