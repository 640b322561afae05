import { Dispatcher } from "undici";

type Handler = Dispatcher.DispatchHandler;

/**
 * A dispatcher that tells a tool call when its request goes out on a connected socket, so that
 * the headers time limit counts from there: time spent connecting belongs to the connection, and
 * a call that never connected was never sent (`unreachable`, not `headers_timeout`).
 *
 * undici's `request()` has no hook for that moment, so this sits between `request()` and the
 * agent, and finds the call by its `signal` (its CallAbort), which every tool call has of its own.
 * It passes undici's own handler through with only `onConnect` wrapped: an interceptor (`compose`)
 * would convert every handler to the new handler API and back, 15–30 µs per call.
 */
export class RequestWrittenDispatcher extends Dispatcher {
  readonly #hooks = new WeakMap<object, () => void>();

  constructor(private readonly inner: Dispatcher) {
    super();
  }

  /** Call `onWritten` once, when the request that carries `signal` is written. */
  watch(signal: object, onWritten: () => void): void {
    this.#hooks.set(signal, onWritten);
  }

  override dispatch(options: Dispatcher.DispatchOptions, handler: Handler): boolean {
    // request() passes its options through, signal included
    const { signal } = options as { signal?: object | null };
    const onWritten = signal && this.#hooks.get(signal);
    if (!onWritten) return this.inner.dispatch(options, handler);
    this.#hooks.delete(signal);
    return this.inner.dispatch(options, notifyingHandler(handler, onWritten));
  }

  override close(): Promise<void> {
    return this.inner.close();
  }

  override destroy(): Promise<void> {
    return this.inner.destroy();
  }
}

/** `handler`, with `onWritten` run first when undici has it on a connected socket and writes it. */
function notifyingHandler(handler: Handler, onWritten: () => void): Handler {
  // only the legacy methods: request()'s handler has no others, and a handler with the new API's
  // onRequestStart would be converted again
  return {
    onConnect(abort) {
      onWritten();
      handler.onConnect?.(abort);
    },
    onError: (error) => handler.onError?.(error),
    onResponseStarted: () => handler.onResponseStarted?.(),
    onHeaders: (status, headers, resume, text) => handler.onHeaders?.(status, headers, resume, text) ?? true,
    onData: (chunk) => handler.onData?.(chunk) ?? true,
    onComplete: (trailers) => handler.onComplete?.(trailers),
  };
}
