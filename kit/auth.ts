import { createHash, timingSafeEqual } from "node:crypto";
import { envSecret, tokenProblem } from "../runtime/secret.js";

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
  const problem = tokenProblem(token);
  // a token no header can carry would refuse every caller: better not to start
  if (problem) throw new Error(`the bearer token ${problem}`);
  const expected = digest(token);
  return (authorization) => {
    const presented = bearerToken(authorization);
    return presented !== undefined && timingSafeEqual(expected, digest(presented));
  };
}

/**
 * The value of environment variable `name`; throws, naming the variable, when it is unset or empty
 * or holds what no `Authorization` header can carry (whitespace, control characters).
 */
export function tokenFromEnv(name: string, env: NodeJS.ProcessEnv = process.env): string {
  const read = envSecret(env, name, `set the environment variable ${name} to the service's bearer token`);
  if (read.ok) return read.secret.reveal();
  throw new Error(read.problem);
}
