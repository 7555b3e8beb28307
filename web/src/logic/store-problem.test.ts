import { describe, expect, it } from "vitest";
import { storeProblemBanner } from "./store-problem";

const now = new Date("2026-12-07T00:10:00Z");

describe("the store problem banner", () => {
  it("says since when and for how long the store refuses writes, in the store's words", () => {
    const banner = storeProblemBanner(
      { store_problem: { since: "2026-12-07T00:07:30Z", error: "database or disk is full" } }, now);
    expect(banner).toMatch(/^The daemon cannot store changes since .+ \(2 min 30 s\): database or disk is full\./);
    expect(banner).toContain("every change (submit, cancel, drain…) is refused");
  });

  it("is absent while the store writes, or before the daemon answered", () => {
    expect(storeProblemBanner({}, now)).toBeUndefined();
    expect(storeProblemBanner(undefined, now)).toBeUndefined();
  });
});
