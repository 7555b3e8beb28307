import { describe, expect, it } from "vitest";
import {
  coreHoursCell, emptyFilter, failureClassCell, filterFromQuery, filterSummary, firstPage, goodputText, jobsApiUrl, jobsPath, nameMatches, nextPage,
  nodesByCores, withFilter,
} from "./job-list";

describe("jobs list filters", () => {
  it("reads the plain list as no filter, on the first page of 100", () => {
    expect(filterFromQuery("")).toEqual(emptyFilter);
    expect(filterFromQuery("?")).toEqual(emptyFilter);
    expect(jobsPath(emptyFilter)).toBe("/jobs");
    expect(jobsApiUrl(emptyFilter)).toBe("/v1/jobs?limit=100");
  });

  it("reads states in any case and order, keeps them in lifecycle order and drops unknown ones", () => {
    expect(filterFromQuery("?state=FAILED").states).toEqual(["FAILED"]);
    expect(filterFromQuery("?state=failed,running,BOGUS,,pending").states).toEqual(["PENDING", "RUNNING", "FAILED"]);
    expect(filterFromQuery("state=CANCELLED,SUCCEEDED").states).toEqual(["SUCCEEDED", "CANCELLED"]);
  });

  it("round-trips every filter through the URL, with readable commas", () => {
    const f = filterFromQuery("?state=RUNNING,FAILED&user=alice&share=vision&since=1d&until=2026-11-24&name=bert*&limit=25");
    expect(f).toMatchObject({ states: ["RUNNING", "FAILED"], user: "alice", share: "vision", since: "1d",
      until: "2026-11-24", name: "bert*", limit: 25, cursor: "", page: 1 });
    const path = jobsPath(f);
    expect(path).toBe("/jobs?state=RUNNING,FAILED&user=alice&share=vision&since=1d&until=2026-11-24&name=bert*&limit=25");
    expect(filterFromQuery(path.slice("/jobs".length))).toEqual(f);
  });

  it("escapes what a value could smuggle in", () => {
    const f = withFilter(emptyFilter, { user: "a&b=c", name: "x y#" });
    const back = filterFromQuery(jobsPath(f).slice("/jobs".length));
    expect(back.user).toBe("a&b=c");
    expect(back.name).toBe("x y#");
    expect(jobsApiUrl(f)).toBe("/v1/jobs?user=a%26b%3Dc&limit=100");
  });

  it("keeps page sizes within the API's 1 to 1000 and ignores nonsense", () => {
    expect(filterFromQuery("?limit=2").limit).toBe(2);
    expect(filterFromQuery("?limit=5000").limit).toBe(1000);
    expect(filterFromQuery("?limit=0").limit).toBe(100);
    expect(filterFromQuery("?limit=-3").limit).toBe(100);
    expect(filterFromQuery("?limit=ten").limit).toBe(100);
  });

  it("builds the API request: no name (the API has none), the cursor with the same filters", () => {
    const f = filterFromQuery("?state=FAILED&share=nlp&since=7d&name=sweep&limit=50&cursor=c1.3132.abcd&page=3");
    expect(jobsApiUrl(f)).toBe("/v1/jobs?state=FAILED&share=nlp&since=7d&limit=50&cursor=c1.3132.abcd");
    expect(f.page).toBe(3);
  });

  it("sends no user filter for a role that reads only its own jobs", () => {
    const f = filterFromQuery("?user=bob&state=RUNNING");
    expect(jobsApiUrl(f)).toBe("/v1/jobs?state=RUNNING&user=bob&limit=100");
    expect(jobsApiUrl(f, true)).toBe("/v1/jobs?state=RUNNING&limit=100");
  });

  it("pages on with the answer's cursor and back to the first page, keeping the filters", () => {
    const f = filterFromQuery("?state=SUCCEEDED&limit=2");
    const second = nextPage(f, "c1.3130.ff00");
    expect(jobsPath(second)).toBe("/jobs?state=SUCCEEDED&limit=2&cursor=c1.3130.ff00&page=2");
    const third = nextPage(second, "c1.38.0011");
    expect(third.page).toBe(3);
    expect(jobsPath(firstPage(third))).toBe("/jobs?state=SUCCEEDED&limit=2");
    // A cursor in a URL without a page number is some later page: the second at least.
    expect(filterFromQuery("?cursor=c1.31.00").page).toBe(2);
    expect(filterFromQuery("?page=4").page).toBe(1);
  });

  it("starts again at the first page when a filter the API applies changes, not for the name", () => {
    const later = nextPage(filterFromQuery("?state=RUNNING"), "c1.3130.ff00");
    expect(withFilter(later, { states: ["FAILED"] })).toMatchObject({ cursor: "", page: 1 });
    expect(withFilter(later, { user: "carol" })).toMatchObject({ cursor: "", page: 1 });
    expect(withFilter(later, { since: "1h" })).toMatchObject({ cursor: "", page: 1 });
    expect(withFilter(later, { limit: 25 })).toMatchObject({ cursor: "", page: 1 });
    expect(withFilter(later, { name: "bert" })).toMatchObject({ cursor: "c1.3130.ff00", page: 2, name: "bert" });
    expect(withFilter(later, { states: ["RUNNING"] })).toMatchObject({ cursor: "c1.3130.ff00", page: 2 });
  });

  it("filters names by a part, in any case, or by a glob", () => {
    expect(nameMatches("BERT-large", "bert")).toBe(true);
    expect(nameMatches("bert-large", "")).toBe(true);
    expect(nameMatches("bert-large", "  ")).toBe(true);
    expect(nameMatches("bert-large", "gpt")).toBe(false);
    expect(nameMatches("bert-large", "bert*")).toBe(true);
    expect(nameMatches("my-bert-large", "bert*")).toBe(false);
    expect(nameMatches("sweep-7", "sweep-?")).toBe(true);
    expect(nameMatches("sweep-17", "sweep-?")).toBe(false);
    expect(nameMatches("a.b(c)", "a.b(*")).toBe(true);
    expect(nameMatches("axb(c)", "a.b(*")).toBe(false);
  });

  it("says what the list shows", () => {
    expect(filterSummary(emptyFilter)).toBe("Every job");
    expect(filterSummary(filterFromQuery("?state=FAILED,CANCELLED&user=alice&share=nlp&since=1d")))
      .toBe("Jobs FAILED or CANCELLED, of user alice, in share nlp, submitted in the last day");
    expect(filterSummary(filterFromQuery("?since=2026-11-01&until=2026-11-20")))
      .toBe("Jobs submitted since 2026-11-01, submitted until 2026-11-20");
  });
});

describe("jobs list columns", () => {
  it("writes the shape as nodes × cores per node, from the accounting or the spec", () => {
    expect(nodesByCores({ nodes: 2, cores: 8 }, {})).toBe("2 × 4");
    expect(nodesByCores({ nodes: 1, cores: 4 }, { nodes: 1, cores_per_node: 4 })).toBe("1 × 4");
    expect(nodesByCores({ nodes: 3, cores: null }, { nodes: 3 })).toBe("3 × whole");
    expect(nodesByCores({ nodes: 2, cores: 7 }, {})).toBe("2 nodes, 7 cores");
    expect(nodesByCores(undefined, { nodes: 2, cores_per_node: 16 })).toBe("2 × 16");
    expect(nodesByCores(undefined, {})).toBe("1 × whole");
  });

  it("writes goodput as a percentage, n/a when the API judged none", () => {
    expect(goodputText({ goodput: 0.98812 })).toBe("98.8 %");
    expect(goodputText({ goodput: 0 })).toBe("0.0 %");
    expect(goodputText({ goodput: null })).toBe("n/a");
    expect(goodputText(undefined)).toBe("n/a");
  });
});

describe("the jobs list's cells", () => {
  it("writes core-hours in the header's unit, with decimals a short job needs", () => {
    expect(coreHoursCell(0.0042)).toBe("0.004");
    expect(coreHoursCell(2.5)).toBe("2.50");
    expect(coreHoursCell(12345.6)).toBe("12,346");
    expect(coreHoursCell(undefined)).toBe("—");
  });

  it("names a failed job's class and nothing for the others", () => {
    expect(failureClassCell({ state: "FAILED", failure_class: "oom" })).toBe("oom");
    expect(failureClassCell({ state: "SUCCEEDED", failure_class: "" })).toBe("—");
    expect(failureClassCell({ state: "RUNNING", failure_class: "node_lost" })).toBe("—");
  });
});
