import { afterEach, describe, expect, it, vi } from "vitest";
import { startLive, type LiveState } from "./live";

// A stream the daemon keeps open: chunks are pushed by the test.
function openStream() {
  let push: (text: string) => void = () => undefined;
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      push = (text) => controller.enqueue(new TextEncoder().encode(text));
    },
  });
  return { response: new Response(body, { status: 200 }), push: (text: string) => push(text) };
}

async function until(condition: () => boolean) {
  for (let i = 0; i < 200 && !condition(); i++) await new Promise((r) => setTimeout(r, 5));
  expect(condition()).toBe(true);
}

describe("the live connection", () => {
  afterEach(() => vi.unstubAllGlobals());

  it("refreshes what the views show as soon as the stream opens, not only after a loss", async () => {
    // What the page fetched as it loaded may predate the stream: a job submitted in between is
    // in no event the stream sends, so the first answer must refresh too.
    const stream = openStream();
    vi.stubGlobal("sessionStorage", { getItem: () => "tok" });
    const fetch = vi.fn(async () => stream.response);
    vi.stubGlobal("fetch", fetch);
    const states: LiveState[] = [];
    let polls = 0;
    const events: unknown[] = [];
    const stop = startLive({ onEvent: (e) => events.push(e), onState: (s) => states.push(s), onPoll: () => polls++ });
    await until(() => states.includes("live"));
    expect(polls).toBe(1);
    const init = (fetch.mock.calls[0] as unknown as [string, RequestInit])[1];
    expect((init.headers as Record<string, string>).Authorization).toBe("Bearer tok");

    stream.push('id: 22\ndata: {"id":22,"type":"job.submitted"}\n\n');
    await until(() => events.length === 1);
    expect(polls).toBe(1);  // an event refreshes through onEvent, not as a poll
    stop();
  });
});
