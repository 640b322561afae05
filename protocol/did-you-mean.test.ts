import { describe, expect, it } from "vitest";
import { didYouMean, oneEditAway } from "./did-you-mean.js";

const FIELDS = ["listen", "public_url", "store", "tenants", "models", "tools", "limits", "log_level"];

describe("oneEditAway", () => {
  it.each([
    ["listne", ["listen"]],
    ["lsten", ["listen"]],
    ["listenn", ["listen"]],
    ["lusten", ["listen"]],
    ["lisetn", ["listen"]],
    ["Listen", ["listen"]],
    ["tool", ["tools"]],
    ["model", ["models"]],
    ["log-level", ["log_level"]],
  ])("finds %s near %j", (word, expected) => {
    expect(oneEditAway(word, FIELDS)).toEqual(expected);
  });

  it.each(["colour", "lstn", "toolz_", "listen", "", "limit_s_"])("finds nothing near %j", (word) => {
    expect(oneEditAway(word, FIELDS)).toEqual([]);
  });

  it("names every name one edit away", () => {
    expect(oneEditAway("cat", ["bat", "cut", "dog", "cart"])).toEqual(["bat", "cut", "cart"]);
  });
});

describe("didYouMean", () => {
  it("is a hint to end a message with, or nothing", () => {
    expect(didYouMean("tool", FIELDS)).toBe('; did you mean "tools"?');
    expect(didYouMean("ca", ["cat", "car"])).toBe('; did you mean "cat" or "car"?');
    expect(didYouMean("colour", FIELDS)).toBe("");
  });
});
