// The events feed's filter and the glob its types use.
import type { TrainyardEvent, Severity } from "./types";

// `type`: a glob over the event's type; `severity`: the least an event must have.
export type EventFilter = Partial<Pick<TrainyardEvent, "job" | "node" | "severity">> & { type?: string };

export function globMatch(pattern: string, text: string): boolean {
  const escaped = pattern.replace(/[.+^${}()|[\]\\]/g, "\\$&").replace(/\*/g, ".*").replace(/\?/g, ".");
  return new RegExp(`^${escaped}$`).test(text);
}

const rank: Record<Severity, number> = { info: 0, warning: 1, error: 2 };

export function matchesFilter(event: TrainyardEvent, filter: EventFilter): boolean {
  if (filter.type && !globMatch(filter.type, event.type)) return false;
  if (filter.job !== undefined && event.job !== filter.job) return false;
  if (filter.node && event.node !== filter.node) return false;
  if (filter.severity && rank[event.severity] < rank[filter.severity]) return false;
  return true;
}

// The feed keeps the newest `limit` events, newest first, each once (a resumed stream may repeat).
export function addEvents(feed: TrainyardEvent[], incoming: TrainyardEvent[], limit: number): TrainyardEvent[] {
  const seen = new Set(feed.map((e) => e.id));
  const fresh = incoming.filter((e) => !seen.has(e.id));
  return [...fresh.reverse(), ...feed].sort((a, b) => b.id - a.id).slice(0, limit);
}
