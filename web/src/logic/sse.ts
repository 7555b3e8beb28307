// Server-sent events parsed from text chunks as fetch() delivers them (EventSource cannot send an
// Authorization header, and the token must never be in a URL).

export interface SseMessage { id?: string; event: string; data: string }

export class SseParser {
  private buffer = "";

  // The complete messages `chunk` finishes; comments (": keep-alive") are dropped.
  push(chunk: string): SseMessage[] {
    this.buffer += chunk.replace(/\r\n?/g, "\n");
    const out: SseMessage[] = [];
    let end: number;
    while ((end = this.buffer.indexOf("\n\n")) >= 0) {
      const block = this.buffer.slice(0, end);
      this.buffer = this.buffer.slice(end + 2);
      const message: SseMessage = { event: "message", data: "" };
      const data: string[] = [];
      for (const line of block.split("\n")) {
        if (line === "" || line.startsWith(":")) continue;
        const colon = line.indexOf(":");
        const field = colon < 0 ? line : line.slice(0, colon);
        const value = colon < 0 ? "" : line.slice(colon + 1).replace(/^ /, "");
        if (field === "id") message.id = value;
        else if (field === "event") message.event = value;
        else if (field === "data") data.push(value);
      }
      if (data.length === 0) continue;
      message.data = data.join("\n");
      out.push(message);
    }
    return out;
  }
}
