import { Readable } from "node:stream";
import { describe, expect, it } from "vitest";
import { readWhole, TOO_LARGE } from "./read-whole.js";

const from = (...chunks: string[]) => Readable.from(chunks.map((chunk) => Buffer.from(chunk)));

describe("readWhole", () => {
  it("gives the body whole, counting its bytes as they come", async () => {
    const sizes: number[] = [];
    const whole = await readWhole(from("ab", "cde"), 5, (size) => sizes.push(size));
    expect(whole === TOO_LARGE ? whole : whole.toString()).toBe("abcde");
    expect(sizes).toEqual([2, 5]);
  });

  it("stops at the limit, keeping nothing past it", async () => {
    expect(await readWhole(from("ab", "cdef"), 5)).toBe(TOO_LARGE);
  });

  it("fails for a body that closes before its end, or errs", async () => {
    const cut = new Readable({ read() {} });
    const read = readWhole(cut, 100);
    cut.push("ab");
    cut.destroy();
    await expect(read).rejects.toMatchObject({ code: "ERR_STREAM_PREMATURE_CLOSE" });
    const broken = new Readable({ read() {} });
    const failing = readWhole(broken, 100);
    broken.destroy(new Error("reset"));
    await expect(failing).rejects.toThrow("reset");
  });

  it("does not wait on a body that went, or erred, before it was listened to", async () => {
    const gone = new Readable({ read() {} });
    gone.destroy();
    await new Promise((resolve) => setImmediate(resolve));
    await expect(readWhole(gone, 100)).rejects.toMatchObject({ code: "ERR_STREAM_PREMATURE_CLOSE" });
    const erred = new Readable({ read() {} });
    erred.on("error", () => undefined);
    erred.destroy(new Error("reset"));
    await new Promise((resolve) => setImmediate(resolve));
    await expect(readWhole(erred, 100)).rejects.toThrow("reset");
  });
});
