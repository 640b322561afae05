import { fail, type Outcome, ok } from "./errors.js";

/**
 * A PDF's text with Mozilla's pdf.js (its legacy build, which runs on Node 20), page by page,
 * stopping once `maxChars` are read. Fonts are never loaded and no code in the PDF is evaluated
 * (`isEvalSupported: false`).
 */
export async function pdfText(
  data: Uint8Array,
  maxChars: number,
  signal: AbortSignal,
): Promise<Outcome<{ title: string | undefined; text: string; pages: number }>> {
  // loaded on the first PDF: most services never read one
  const pdfjs = await import("pdfjs-dist/legacy/build/pdf.mjs");
  const task = pdfjs.getDocument({
    data: new Uint8Array(data), // pdf.js takes the buffer over
    isEvalSupported: false,
    disableFontFace: true,
    useSystemFonts: false,
    stopAtErrors: false,
    verbosity: pdfjs.VerbosityLevel.ERRORS,
  });
  const stop = () => void task.destroy();
  signal.addEventListener("abort", stop, { once: true });
  try {
    const document = await task.promise;
    const info = (await document.getMetadata().catch(() => undefined))?.info as
      | { Title?: unknown }
      | undefined;
    const parts: string[] = [];
    let length = 0;
    for (let number = 1; number <= document.numPages && length < maxChars; number++) {
      const page = await document.getPage(number);
      const content = await page.getTextContent();
      const text = content.items
        .map((item) => ("str" in item ? item.str + (item.hasEOL ? "\n" : "") : ""))
        .join("")
        .trim();
      parts.push(text);
      length += text.length + 2;
      page.cleanup();
    }
    const title = typeof info?.Title === "string" && info.Title.trim() !== "" ? info.Title.trim() : undefined;
    return ok({ title, text: parts.join("\n\n"), pages: document.numPages });
  } catch (error) {
    if (signal.aborted) throw error;
    return fail("unreadable", `the PDF could not be read (${(error as Error).message ?? error})`);
  } finally {
    signal.removeEventListener("abort", stop);
    await task.destroy();
  }
}
