import { assertType, describe, expect, expectTypeOf, it } from "vitest";
import { apiUrl, send, type Answer } from "./api";
import type { NodeHealthRecord } from "./logic/types";

describe("API URLs", () => {
  it("fill a template's segments, each encoded", () => {
    expect(apiUrl("/v1/nodes/{name}/health", { path: { name: "rack 1/n#2" }, query: { limit: 50 } }))
      .toBe("/v1/nodes/rack%201%2Fn%232/health?limit=50");
  });
  it("leave out the query parameters that are undefined or empty, in the order given", () => {
    expect(apiUrl("/v1/jobs", { query: { state: "", user: undefined, limit: 10, cursor: "a+b" } }))
      .toBe("/v1/jobs?limit=10&cursor=a%2Bb");
    expect(apiUrl("/v1/whoami")).toBe("/v1/whoami");
  });
  // Checked by tsc (npm run build), which fails on an @ts-expect-error that finds no error.
  it("take their types from the document", () => {
    expectTypeOf<Answer<"/v1/nodes/{name}/health">["checks"]>().toEqualTypeOf<NodeHealthRecord[]>();
    // @ts-expect-error a template's segments must be given
    assertType(() => apiUrl("/v1/jobs/{id}"));
    // @ts-expect-error GET /v1/jobs takes no such parameter
    assertType(() => apiUrl("/v1/jobs", { query: { nodes: 2 } }));
    // @ts-expect-error POST /v1/healthchecks needs its body
    assertType(() => send("post", apiUrl("/v1/healthchecks")));
    // @ts-expect-error /v1/jobs/{id}/cancel has no DELETE
    assertType(() => send("delete", apiUrl("/v1/jobs/{id}/cancel", { path: { id: "1" } })));
  });
});
