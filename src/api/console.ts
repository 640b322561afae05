import { existsSync } from "node:fs";
import { readFile } from "node:fs/promises";
import type { ServerResponse } from "node:http";
import { ApiError } from "./errors.js";
import { sendError } from "./http.js";
import type { Route } from "./router.js";

/**
 * Where `npm run build` writes the console (web/build-console.ts): dist/web/console/ of the package
 * this file is in, whether it runs built (dist/src/api/) or from source (src/api/, in the tests).
 */
function consoleDir(): URL {
  let dir = new URL("./", import.meta.url);
  while (!existsSync(new URL("package.json", dir)) && dir.pathname !== "/") dir = new URL("../", dir);
  return new URL("dist/web/console/", dir);
}

const CONSOLE_DIR = consoleDir();

/** The console's files, each with its type: nothing else is ever served from the folder. */
const FILES: Readonly<Record<string, string>> = {
  "index.html": "text/html; charset=utf-8",
  "console.js": "text/javascript; charset=utf-8",
  "console.js.map": "application/json; charset=utf-8",
  "console.css": "text/css; charset=utf-8",
};

/**
 * The page may load its own script and style and talk to this Brain, and nothing else: no inline
 * script, no eval, no other origin, no frames or forms elsewhere. Events are shown as text, and
 * this holds even if some day one were not.
 */
export const CONSOLE_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "connect-src 'self'",
  "img-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join("; ");

const cache = new Map<string, Buffer>();

async function serveFile(res: ServerResponse, name: string): Promise<void> {
  const type = Object.hasOwn(FILES, name) ? FILES[name] : undefined;
  if (!type) return sendError(res, new ApiError("not_found", `the console has no file ${name}`));
  let body = cache.get(name);
  if (!body) {
    try {
      body = await readFile(new URL(name, CONSOLE_DIR));
    } catch {
      return sendError(res, new ApiError("not_found", "the console is not built: run npm run build"));
    }
    cache.set(name, body);
  }
  res.writeHead(200, {
    "content-type": type,
    "content-length": body.length,
    "content-security-policy": CONSOLE_POLICY,
    "x-content-type-options": "nosniff",
    "referrer-policy": "no-referrer",
    "cross-origin-opener-policy": "same-origin",
    // the files change with Brain: a browser asks again rather than keep an old console
    "cache-control": "no-cache",
  });
  res.end(body);
}

const page = { description: "The console's page.", contentTypes: ["text/html"] };
const notFound = { description: "No such file of the console, or the console is not built." };

/** GET /console and its static files: a page that talks to this API with a key the person pastes. */
export function consoleRoutes(): Route[] {
  return [
    {
      method: "GET",
      path: "/console",
      auth: "public",
      operationId: "console",
      summary: "The web console: a static page; the key is pasted into it, never sent in a URL.",
      responses: { 200: page, 404: notFound },
      handle: ({ res }) => serveFile(res, "index.html"),
    },
    {
      method: "GET",
      path: "/console/{file}",
      auth: "public",
      operationId: "consoleFile",
      summary: "The console's script and stylesheet.",
      responses: {
        200: { description: "The file.", contentTypes: ["text/javascript", "text/css", "application/json"] },
        404: notFound,
      },
      handle: ({ res, params }) => serveFile(res, params.file as string),
    },
  ];
}
