// The live connection: GET /v1/events/stream read with fetch() (the Authorization header; never a
// token in a URL), resumed with Last-Event-ID after a loss, with a "reconnecting" state meanwhile.
// A daemon without the stream (404) is refreshed every 10 s instead, never faster: each refresh asks
// for the stream again, so a lost daemon shows the banner there too, and a stream that appears is used.
import { token } from "./session";
import { SseParser } from "./logic/sse";
import type { TrainyardEvent } from "./logic/types";

export type LiveState = "connecting" | "live" | "reconnecting" | "polling" | "unauthorized";

export const pollIntervalMs = 10_000;

export interface LiveHandlers {
  onEvent(event: TrainyardEvent): void;
  onState(state: LiveState): void;
  onPoll(): void;
}

export function startLive(handlers: LiveHandlers): () => void {
  let stopped = false;
  let lastId: string | undefined;
  let retryMs = 1000;
  let controller: AbortController | undefined;
  let timer: ReturnType<typeof setTimeout> | undefined;

  const later = (fn: () => void, ms: number) => {
    timer = setTimeout(fn, ms);
  };

  // Every answer means "refresh what you show": the first one too, since what the views fetched as
  // the page loaded may predate the stream, and what changed in between is not in it.
  const answeredNow = () => {
    handlers.onPoll();
    retryMs = 1000;
  };

  const connect = async () => {
    if (stopped) return;
    controller = new AbortController();
    const headers: Record<string, string> = { Authorization: `Bearer ${token() ?? ""}`, Accept: "text/event-stream" };
    if (lastId) headers["Last-Event-ID"] = lastId;
    try {
      const response = await fetch("/v1/events/stream", { headers, signal: controller.signal, cache: "no-store" });
      if (response.status === 404) {
        handlers.onState("polling");
        answeredNow();
        return later(connect, pollIntervalMs);
      }
      if (response.status === 401) return handlers.onState("unauthorized");
      if (!response.ok || !response.body) throw new Error(`HTTP ${response.status}`);
      handlers.onState("live");
      answeredNow();  // what changed before the stream began or while it was down, at once
      const parser = new SseParser();
      const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        for (const message of parser.push(value)) {
          if (message.id) lastId = message.id;
          try {
            handlers.onEvent(JSON.parse(message.data) as TrainyardEvent);
          } catch {
            // A message that is not an event (a future type) changes nothing shown.
          }
        }
      }
      throw new Error("stream ended");
    } catch {
      if (stopped) return;
      handlers.onState("reconnecting");
      later(connect, retryMs);
      retryMs = Math.min(retryMs * 2, pollIntervalMs);
    }
  };

  handlers.onState("connecting");
  void connect();
  return () => {
    stopped = true;
    controller?.abort();
    if (timer) clearTimeout(timer);
  };
}
