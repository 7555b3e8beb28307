import { describe, expect, it } from "vitest";
import { firstDifference } from "./first-difference.mjs";

describe("firstDifference", () => {
  it("finds nothing in equal texts", () => {
    expect(firstDifference("a\nb\n", "a\nb\n")).toBeNull();
  });

  it("names the first line that changed, with both versions", () => {
    expect(firstDifference("a\nb\nc\nd\n", "a\nb\nX\nY\n")).toEqual({ line: 3, expected: "c\n", actual: "X\n" });
  });

  it("names the line where the shorter text ends", () => {
    expect(firstDifference("a\nb\nc\n", "a\nb\n")).toEqual({ line: 3, expected: "c\n", actual: undefined });
    expect(firstDifference("a\n", "a\nextra\n")).toEqual({ line: 2, expected: undefined, actual: "extra\n" });
  });

  it("tells line endings apart", () => {
    expect(firstDifference("a\nb\n", "a\r\nb\r\n")).toEqual({ line: 1, expected: "a\n", actual: "a\r\n" });
    expect(firstDifference("a\nb\n", "a\nb")).toEqual({ line: 2, expected: "b\n", actual: "b" });
  });
});
