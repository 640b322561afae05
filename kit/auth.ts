import { createHash, timingSafeEqual } from "node:crypto";

function digest(value: string): Buffer {
  return createHash("sha256").update(value).digest();
}

/** The token of an `Authorization: Bearer TOKEN` header, or undefined. */
export function bearerToken(header: string | undefined): string | undefined {
  if (!header) return undefined;
  return /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(header)?.[1];
}

/**
 * A check of `Authorization` headers against one bearer token. Both sides are compared as SHA-256
 * digests with timingSafeEqual, so the time taken says nothing about the token's bytes or length;
 * only the digest is kept.
 */
export function bearerAuth(token: string): (authorization: string | undefined) => boolean {
  if (token.length === 0) throw new Error("a bearer token must not be empty");
  const expected = digest(token);
  return (authorization) => {
    const presented = bearerToken(authorization);
    return presented !== undefined && timingSafeEqual(expected, digest(presented));
  };
}

/** The value of environment variable `name`; throws, naming the variable, when it is unset or empty. */
export function tokenFromEnv(name: string, env: NodeJS.ProcessEnv = process.env): string {
  const value = env[name];
  if (!value) throw new Error(`set the environment variable ${name} to the service's bearer token`);
  return value;
}
