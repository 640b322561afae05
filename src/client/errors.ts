/** An error answer of Brain's API, with its stable code (protocol/errors.ts). */
export class BrainApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = "BrainApiError";
  }
}

/** Brain answered with something that is not what its API says: a wrong URL, or a proxy in between. */
export class BrainProtocolError extends Error {
  constructor(what: string, problems: readonly string[]) {
    super(`Brain's answer to ${what} is not what its API says: ${problems.slice(0, 3).join("; ")}`);
    this.name = "BrainProtocolError";
  }
}

/** Brain did not answer a request in the client's time limit. */
export class BrainTimeoutError extends Error {
  constructor(what: string, timeoutMs: number) {
    super(`Brain did not answer ${what} within ${timeoutMs / 1000} s`);
    this.name = "BrainTimeoutError";
  }
}

/**
 * Brain could not be reached (refused, reset, no network), which `fetch` reports as a TypeError.
 * `cause` is what Node says went wrong, with its `code` (ECONNREFUSED …) where it has one; a
 * browser says nothing more, and `cause` is its TypeError.
 */
export class BrainUnreachableError extends Error {
  constructor(what: string, error: unknown) {
    const cause = error instanceof TypeError && error.cause instanceof Error ? error.cause : error;
    const reason = (cause as { code?: unknown }).code ?? (cause as Error).message;
    super(`Brain could not be reached for ${what}: ${String(reason)}`, { cause });
    this.name = "BrainUnreachableError";
  }
}
