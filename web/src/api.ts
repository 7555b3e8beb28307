// Every data request: the REST API on this origin with the session's bearer token. Requests are
// typed by the daemon's OpenAPI document (logic/api.gen.ts): a URL is built from a documented path
// template, and the answer, the body and the parameters are the document's for that path and
// method, so no view can decide for itself what the API sends.
import type { paths } from "./logic/api.gen";
import { token } from "./session";

export class ApiError extends Error {
  constructor(readonly status: number, readonly code: string, message: string, readonly field?: string) {
    super(message);
  }
}

// A documented path template, such as "/v1/jobs/{id}".
type ApiPath = keyof paths;
type Method = "get" | "post" | "put" | "patch" | "delete";
// The generated paths list every method; one a path lacks is `?: never`, so its type is undefined.
type Operation<P extends ApiPath, M extends Method> = Exclude<paths[P][M], undefined>;
type MethodOf<P extends ApiPath> = { [M in Method]: paths[P][M] extends undefined ? never : M }[Method];
export type ReadablePath = { [P in ApiPath]: "get" extends MethodOf<P> ? P : never }[ApiPath];

type Json<R> = R extends { content: { "application/json": infer T } } ? T : never;
// A route declares one success status: 200, or 201 (created) or 202 (accepted).
type Success<O> = O extends { responses: infer R } ? Json<R[Extract<keyof R, 200 | 201 | 202>]> : never;
// What a successful request answers, as the document declares it.
export type Answer<P extends ApiPath, M extends Method = "get"> = Success<Operation<P, M>>;

// A template's {segments} must all be given; the query parameters are those of its GET.
type PathParameters<P extends ApiPath> = Exclude<Operation<P, MethodOf<P>>["parameters"]["path"], undefined>;
type QueryParameters<P extends ApiPath> = Exclude<Operation<P, "get">["parameters"]["query"], undefined>;
type UrlParts<P extends ApiPath> = [PathParameters<P>] extends [never]
  ? [parts?: { query?: QueryParameters<P> }]
  : [parts: { path: PathParameters<P>; query?: QueryParameters<P> }];
// The body an operation takes: required, optional (a drain's reason) or none at all.
type Body<O> = O extends { requestBody: { content: { "application/json": infer B } } } ? [body: B]
  : O extends { requestBody?: never } ? []
  : O extends { requestBody?: { content: { "application/json": infer B } } } ? [body?: B]
  : [];

declare const template: unique symbol;
// A URL of the API, carrying the path template it was built from so that get and send know its types.
export type ApiUrl<P extends ApiPath> = string & { readonly [template]: P };

// The URL of a documented path: its {segments} filled in, and its query without the parameters
// left undefined or empty (an empty filter is no filter).
export function apiUrl<P extends ApiPath>(path: P, ...[parts]: UrlParts<P>): ApiUrl<P> {
  const { path: segments = {}, query = {} } = (parts ?? {}) as {
    path?: Record<string, string | number>;
    query?: Record<string, string | number | undefined>;
  };
  const filled = path.replace(/\{(\w+)\}/g, (_, name: string) => encodeURIComponent(String(segments[name])));
  const search = new URLSearchParams();
  for (const [name, value] of Object.entries(query)) {
    if (value !== undefined && value !== "") search.set(name, String(value));
  }
  const text = search.toString();
  return (text ? `${filled}?${text}` : filled) as ApiUrl<P>;
}

export function get<P extends ReadablePath>(url: ApiUrl<P>): Promise<Answer<P>> {
  return request("GET", url) as Promise<Answer<P>>;
}

export function send<P extends ApiPath, M extends Exclude<MethodOf<P>, "get">>(
  method: M, url: ApiUrl<P>, ...[body]: Body<Operation<P, M>>
): Promise<Answer<P, M>> {
  return request(method.toUpperCase(), url, body) as Promise<Answer<P, M>>;
}

async function request(method: string, url: string, body?: unknown): Promise<unknown> {
  const headers: Record<string, string> = { Authorization: `Bearer ${token() ?? ""}` };
  if (body !== undefined) headers["Content-Type"] = "application/json";
  let response: Response;
  try {
    response = await fetch(url, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  } catch {
    throw new ApiError(0, "unreachable", "the daemon cannot be reached");
  }
  const text = await response.text();
  const answer = text ? JSON.parse(text) : {};
  if (!response.ok) {
    const error = answer?.error ?? {};
    throw new ApiError(response.status, error.code ?? "error", error.message ?? `HTTP ${response.status}`, error.field);
  }
  return answer;
}

// What a failed request tells the person looking at the page.
export function explain(error: unknown): string {
  if (error instanceof ApiError) {
    if (error.status === 401) return "Your token is not valid (unknown, revoked or expired). Sign in again.";
    return error.message;
  }
  return String(error);
}
