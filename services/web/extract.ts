import { Readability } from "@mozilla/readability";
import { parseHTML } from "linkedom";
import TurndownService from "turndown";
import { fail, type Outcome, ok } from "./errors.js";
import type { FetchedPage } from "./fetch-page.js";
import { pdfText } from "./pdf-text.js";

export type Format = "markdown" | "text";

export interface Readable {
  title: string | undefined;
  content: string;
  /** The content was cut at the character limit. */
  truncated: boolean;
}

/** Elements past which Readability gives up on a page (a hostile page is not read forever). */
const MAX_ELEMENTS = 100_000;
const BLOCKS =
  "p,div,section,article,header,footer,li,tr,h1,h2,h3,h4,h5,h6,pre,blockquote,br,hr,table,ul,ol,dd,dt";

const turndown = new TurndownService({
  headingStyle: "atx",
  codeBlockStyle: "fenced",
  bulletListMarker: "-",
});
turndown.remove(["script", "style", "noscript", "iframe", "object", "embed", "template"]);

/** The charset a page's `<meta>` declares, for HTML sent without one in its Content-Type. */
function declaredCharset(head: string): string | undefined {
  return head.match(/<meta[^>]+charset\s*=\s*["']?([\w-]+)/i)?.[1];
}

function decode(body: Uint8Array, charset: string | undefined): string {
  try {
    return new TextDecoder(charset ?? "utf-8").decode(body);
  } catch {
    return new TextDecoder("utf-8").decode(body); // a charset label nobody knows
  }
}

type HtmlElement = NonNullable<ReturnType<typeof parseHTML>["document"]["body"]>;

/** Text of an element with a line break after each block, whitespace within a line collapsed. */
function blockText(root: HtmlElement): string {
  for (const block of root.querySelectorAll(BLOCKS)) block.after(root.ownerDocument.createTextNode("\n"));
  return (root.textContent ?? "")
    .split("\n")
    .map((line: string) => line.replace(/\s+/g, " ").trim())
    .join("\n")
    .replace(/\n{3,}/g, "\n\n")
    .trim();
}

/** The readable part of an HTML page (Readability), or its whole body when Readability finds no article. */
function readHtml(page: string, url: string, format: Format): { title: string | undefined; content: string } {
  // linkedom makes a page without <html> into a tree of its own shape, with an empty body
  const html = /<html[\s>]/i.test(page)
    ? page
    : `<!doctype html><html><head></head><body>${page}</body></html>`;
  const { document } = parseHTML(html);
  // Readability makes links absolute against the document's base
  if (!document.querySelector("base[href]") && document.head) {
    const base = document.createElement("base");
    base.setAttribute("href", url);
    document.head.prepend(base);
  }
  const pageTitle = document.title?.trim() || undefined;
  let article: ReturnType<Readability<string>["parse"]> = null;
  try {
    article = new Readability(document, { maxElemsToParse: MAX_ELEMENTS, keepClasses: false }).parse();
  } catch {
    // too large for Readability, or a page it cannot take: the body as it is follows
  }
  // Readability finds no article in a short page, or one of links only: then the whole body, parsed
  // again since Readability has taken the first tree apart
  const found = article?.textContent?.trim() ? article.content : undefined;
  const html_ = found ?? parseHTML(html).document.body?.innerHTML ?? "";
  const title = article?.title?.trim() || pageTitle;
  if (format === "markdown") return { title, content: turndown.turndown(html_).trim() };
  const { document: fragment } = parseHTML(`<!doctype html><html><body>${html_}</body></html>`);
  for (const unwanted of fragment.querySelectorAll("script,style,noscript,template")) unwanted.remove();
  return { title, content: fragment.body ? blockText(fragment.body) : "" };
}

/** A fetched page as content for the model: readable HTML, text, pretty JSON or a PDF's text. */
export async function readableContent(
  page: FetchedPage,
  format: Format,
  maxChars: number,
  signal: AbortSignal,
): Promise<Outcome<Readable>> {
  let title: string | undefined;
  let content: string;
  if (page.kind === "pdf") {
    const read = await pdfText(page.body, maxChars, signal);
    if (!read.ok) return read;
    ({ title, text: content } = read.value);
  } else {
    const head =
      page.kind === "html" && !page.charset
        ? new TextDecoder("latin1").decode(page.body.subarray(0, 2048))
        : "";
    const text = decode(page.body, page.charset ?? declaredCharset(head));
    if (page.kind === "html") ({ title, content } = readHtml(text, page.url, format));
    else if (page.kind === "json") content = prettyJson(text);
    else content = text;
  }
  if (content.trim() === "" && page.body.byteLength > 0 && page.kind === "pdf") {
    return fail("unreadable", "the PDF has no text layer (it may be scanned images)");
  }
  const truncated = content.length > maxChars;
  return ok({ title, content: truncated ? content.slice(0, maxChars) : content, truncated });
}

function prettyJson(text: string): string {
  try {
    return JSON.stringify(JSON.parse(text), null, 2);
  } catch {
    return text; // cut at the byte limit, or not JSON after all: as it came
  }
}
