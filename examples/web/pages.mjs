// Serve the pages in this folder on 127.0.0.1:8096 (or PORT), for the README's web_fetch demo:
//
//   node examples/web/pages.mjs &      # http://127.0.0.1:8096/tides.html
import { readFile } from "node:fs/promises";
import { createServer } from "node:http";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const folder = dirname(fileURLToPath(import.meta.url));
const port = Number(process.env.PORT ?? 8096);
const PAGES = new Set(["/tides.html"]);

const server = createServer(async (req, res) => {
  // URL.parse answers null where new URL would throw, and a throw here would stop the server:
  // a request target such as "//[" is the client's mistake, not the server's end
  const path = URL.parse(req.url ?? "/", "http://pages")?.pathname;
  if (path === undefined) {
    res.writeHead(400, { "content-type": "text/plain" }).end("not a request target\n");
    return;
  }
  if (!PAGES.has(path)) {
    res.writeHead(404, { "content-type": "text/plain" }).end("no such page\n");
    return;
  }
  res
    .writeHead(200, { "content-type": "text/html; charset=utf-8" })
    .end(await readFile(join(folder, path.slice(1))));
});
server.listen(port, "127.0.0.1", () =>
  console.log(`pages on http://127.0.0.1:${server.address().port}/tides.html`),
);
for (const signal of ["SIGINT", "SIGTERM"]) process.on(signal, () => server.close(() => process.exit(0)));
