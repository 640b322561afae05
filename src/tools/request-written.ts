import type { Dispatcher } from "undici";

type Handler = Dispatcher.DispatchHandler;

/**
 * Tells a tool call when its request goes out on a connected socket, so that the headers time
 * limit counts from there: time spent connecting belongs to the connection, and a call that never
 * connected was never sent (`unreachable`, not `headers_timeout`).
 *
 * undici's `request()` has no hook for that moment, so this is an interceptor keyed by the
 * request's abort signal, which every tool call has of its own.
 */
export class RequestWrittenHooks {
  readonly #hooks = new WeakMap<AbortSignal, () => void>();

  /** Call `onWritten` once, when the request that carries `signal` is written. */
  watch(signal: AbortSignal, onWritten: () => void): void {
    this.#hooks.set(signal, onWritten);
  }

  readonly interceptor: Dispatcher.DispatcherComposeInterceptor = (dispatch) => (options, handler) => {
    // request() passes its options through, signal included
    const { signal } = options as { signal?: AbortSignal };
    const onWritten = signal && this.#hooks.get(signal);
    if (!onWritten) return dispatch(options, handler);
    this.#hooks.delete(signal);
    return dispatch(options, notifyingHandler(handler, onWritten));
  };
}

function notifyingHandler(handler: Handler, onWritten: () => void): Handler {
  return {
    onRequestStart(controller, context) {
      onWritten();
      handler.onRequestStart?.(controller, context);
    },
    onRequestUpgrade: (controller, statusCode, headers, socket) =>
      handler.onRequestUpgrade?.(controller, statusCode, headers, socket),
    onResponseStart: (controller, statusCode, headers, statusMessage) =>
      handler.onResponseStart?.(controller, statusCode, headers, statusMessage),
    onResponseData: (controller, chunk) => handler.onResponseData?.(controller, chunk),
    onResponseEnd: (controller, trailers) => handler.onResponseEnd?.(controller, trailers),
    onResponseError: (controller, error) => handler.onResponseError?.(controller, error),
  };
}
