// A small website on loopback for web_fetch to read: an article, text, JSON, a PDF, redirects,
// large, slow and never-ending pages, and a robots.txt. It records every request it gets, and
// every connection that closed before its answer was done. startSite serves a test's own routes
// the same way, for a site that must be new to the service (its robots.txt not yet read).
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { gzipSync } from "node:zlib";

export const ARTICLE = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Tide tables | The Harbour Gazette</title>
<style>body { color: red }</style><script>document.write("tracking")</script></head>
<body>
<nav><a href="/">Home</a> · <a href="/news">News</a> · <a href="/sport">Sport</a></nav>
<article>
<h1>Why the tides are late this year</h1>
<p class="byline">By A. Mariner</p>
<p>The harbour master says the <b>spring tides</b> arrive forty minutes later than the almanac
predicted. Tide tables are computed from harmonic constituents measured over many years, and the
local constituents shift slowly as the harbour silts up and the channel is dredged.</p>
<p>Read the <a href="/tables/2026.html">full tables for 2026</a> or the older records kept by the
port authority. Sailors leaving on the morning tide should add a margin until the new survey is out.</p>
<h2>What changes</h2>
<ul><li>High water: about 40 minutes later</li><li>Low water: about 25 minutes later</li></ul>
<p>The survey boat goes out in March, and the corrected tables follow in April, the authority says,
after the harmonic analysis has been run again on a full year of gauge readings.</p>
</article>
<footer>© The Harbour Gazette · <a href="/privacy">Privacy</a></footer>
</body></html>`;

// a crawler follows the most specific group naming it, and only that one
export const ROBOTS =
  "User-agent: *\nDisallow: /private/\n\nUser-agent: BrainWeb\nDisallow: /private/\nDisallow: /no-agents/\n";

/** A one-page PDF whose text is `text` and whose Info title is `title`, built object by object. */
export function pdfOf(title: string, text: string): Buffer {
  const stream = `BT /F1 18 Tf 72 720 Td (${text}) Tj ET`;
  const objects = [
    "<< /Type /Catalog /Pages 2 0 R >>",
    "<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
    "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R /Resources << /Font << /F1 5 0 R >> >> >>",
    `<< /Length ${stream.length} >>\nstream\n${stream}\nendstream`,
    "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    `<< /Title (${title}) >>`,
  ];
  let pdf = "%PDF-1.4\n";
  const offsets: number[] = [];
  objects.forEach((object, i) => {
    offsets.push(pdf.length);
    pdf += `${i + 1} 0 obj\n${object}\nendobj\n`;
  });
  const xref = pdf.length;
  pdf += `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n`;
  for (const offset of offsets) pdf += `${String(offset).padStart(10, "0")} 00000 n \n`;
  pdf += `trailer\n<< /Size ${objects.length + 1} /Root 1 0 R /Info 6 0 R >>\nstartxref\n${xref}\n%%EOF\n`;
  return Buffer.from(pdf, "latin1");
}

export interface PageServer {
  /** `http://127.0.0.1:PORT` */
  origin: string;
  port: number;
  /** Paths asked for, in order (with their query). */
  requests: string[];
  /** Paths whose connection closed before the answer was finished. */
  abandoned: string[];
  /** The User-Agent of each request. */
  userAgents: string[];
  close(): Promise<void>;
}

export type Route = (req: IncomingMessage, res: ServerResponse, url: URL) => void;

export const send = (
  res: ServerResponse,
  status: number,
  type: string,
  body: string | Buffer,
  headers = {},
) => {
  res.writeHead(status, { "content-type": type, ...headers });
  res.end(body);
};

const PAGES: Record<string, Route> = {
  "/article.html": (_req, res) => send(res, 200, "text/html; charset=utf-8", ARTICLE),
  "/article-gzip.html": (_req, res) =>
    send(res, 200, "text/html; charset=utf-8", gzipSync(ARTICLE), { "content-encoding": "gzip" }),
  "/latin1.html": (_req, res) =>
    send(
      res,
      200,
      "text/html",
      Buffer.from(
        `<html><head><meta charset="iso-8859-1"><title>Caf\u00e9</title></head><body><p>Cr\u00e8me br\u00fbl\u00e9e</p></body></html>`,
        "latin1",
      ),
    ),
  "/notes.txt": (_req, res) => send(res, 200, "text/plain; charset=utf-8", "line one\nline two\n"),
  "/data.json": (_req, res) => send(res, 200, "application/json", '{"tide":{"high":"06:40","low":"12:55"}}'),
  "/doc.pdf": (_req, res) =>
    send(res, 200, "application/pdf", pdfOf("Harbour survey", "Soundings of the channel")),
  "/broken.pdf": (_req, res) => send(res, 200, "application/pdf", "%PDF-1.4\nthis is not a pdf at all"),
  "/image.png": (_req, res) => send(res, 200, "image/png", Buffer.from([0x89, 0x50, 0x4e, 0x47])),
  "/missing": (_req, res) => send(res, 404, "text/html", "<h1>Not Found</h1>"),
  "/redirect": (_req, res, url) => {
    res.writeHead(Number(url.searchParams.get("status") ?? 302), {
      location: url.searchParams.get("to") ?? "/",
    });
    res.end();
  },
  "/loop": (_req, res, url) => {
    const n = Number(url.searchParams.get("n") ?? 0);
    res.writeHead(301, { location: `/loop?n=${n + 1}` });
    res.end();
  },
  // 3 MB of paragraphs, in 64 KiB writes
  "/big.html": (_req, res) => {
    res.writeHead(200, { "content-type": "text/html" });
    res.write("<html><head><title>Big</title></head><body>");
    const paragraph = `<p>${"All work and no play makes a dull page. ".repeat(40)}</p>\n`;
    for (let written = 0; written < 3_000_000; written += paragraph.length) res.write(paragraph);
    res.end("</body></html>");
  },
  "/big.pdf": (_req, res) => send(res, 200, "application/pdf", Buffer.alloc(200_000, 0x20)),
  // a page that takes 2.5 s, a paragraph every half second
  "/slow.html": (_req, res) => {
    res.writeHead(200, { "content-type": "text/html" });
    res.write("<html><head><title>Slow</title></head><body>");
    let sent = 0;
    const timer = setInterval(() => {
      res.write(`<p>Paragraph ${++sent} of a page that arrives slowly.</p>`);
      if (sent === 5) {
        clearInterval(timer);
        res.end("</body></html>");
      }
    }, 500);
    res.on("close", () => clearInterval(timer));
  },
  // headers, then nothing, until the client goes away
  "/hang": (_req, res) => {
    res.writeHead(200, { "content-type": "text/html" });
    res.write("<html><body>");
  },
  "/robots.txt": (_req, res) => send(res, 200, "text/plain", ROBOTS),
  "/private/page.html": (_req, res) => send(res, 200, "text/html", "<p>private</p>"),
  "/no-agents/page.html": (_req, res) => send(res, 200, "text/html", "<p>for people</p>"),
};

/** The website described at the top of this file. */
export const startPageServer = () => startSite(PAGES);

/** A site on loopback answering `routes` by path (404 for any other), recording as PageServer says. */
export async function startSite(routes: Record<string, Route>): Promise<PageServer> {
  const requests: string[] = [];
  const abandoned: string[] = [];
  const userAgents: string[] = [];
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://pages");
    requests.push(`${url.pathname}${url.search}`);
    userAgents.push(req.headers["user-agent"] ?? "");
    res.on("close", () => {
      if (!res.writableFinished) abandoned.push(url.pathname);
    });
    const route = routes[url.pathname];
    if (route) route(req, res, url);
    else send(res, 404, "text/plain", "no such page");
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    origin: `http://127.0.0.1:${port}`,
    port,
    requests,
    abandoned,
    userAgents,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
