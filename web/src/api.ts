// Every data request: the REST API on this origin with the session's bearer token.
import { token } from "./session";

export class ApiError extends Error {
  constructor(readonly status: number, readonly code: string, message: string, readonly field?: string) {
    super(message);
  }
}

export async function api<T>(path: string, init: { method?: string; body?: unknown } = {}): Promise<T> {
  const headers: Record<string, string> = { Authorization: `Bearer ${token() ?? ""}` };
  if (init.body !== undefined) headers["Content-Type"] = "application/json";
  let response: Response;
  try {
    response = await fetch(path, {
      method: init.method ?? "GET",
      headers,
      body: init.body === undefined ? undefined : JSON.stringify(init.body),
    });
  } catch {
    throw new ApiError(0, "unreachable", "the daemon cannot be reached");
  }
  const text = await response.text();
  const body = text ? JSON.parse(text) : {};
  if (!response.ok) {
    const error = body?.error ?? {};
    throw new ApiError(response.status, error.code ?? "error", error.message ?? `HTTP ${response.status}`, error.field);
  }
  return body as T;
}

// What a failed request tells the person looking at the page.
export function explain(error: unknown): string {
  if (error instanceof ApiError) {
    if (error.status === 401) return "Your token is not valid (unknown, revoked or expired). Sign in again.";
    return error.message;
  }
  return String(error);
}
