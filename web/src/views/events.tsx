import { useState } from "preact/hooks";
import { useApp } from "../app-state";
import { Time } from "../components/ui";
import { matchesFilter, type EventFilter } from "../logic/events";
import type { Severity, TrainyardEvent } from "../logic/types";

export function EventFeed({ events }: { events: TrainyardEvent[] }) {
  if (events.length === 0) return <p>No events yet.</p>;
  return (
    <ol class="feed" aria-live="polite">
      {events.map((e) => (
        <li key={e.id} class={`sev-${e.severity}`} data-type={e.type}>
          <Time at={e.time} /> <span class={`badge sev-${e.severity}`}>{e.severity}</span> <code>{e.type}</code>{" "}
          {e.job !== undefined ? <a href={`/jobs/${e.job}`}>{e.message}</a> : e.node ? <a href={`/nodes/${encodeURIComponent(e.node)}`}>{e.message}</a> : e.message}
        </li>
      ))}
    </ol>
  );
}

export function Events() {
  const { events, live } = useApp();
  const [filter, setFilter] = useState<EventFilter>({});
  const set = (key: keyof EventFilter) => (e: Event) => {
    const value = (e.target as HTMLInputElement).value.trim();
    setFilter((f) => ({ ...f, [key]: value === "" ? undefined : key === "job" ? Number(value) : value }));
  };
  return (
    <>
      <h1>Events</h1>
      {live === "polling" && <p class="hint">This daemon has no event stream yet: the feed fills as the stream arrives.</p>}
      <form class="toolbar" onSubmit={(e) => e.preventDefault()} aria-label="Filter events">
        <label>Type <input placeholder="job.*" onInput={set("type")} /></label>
        <label>Job <input inputMode="numeric" onInput={set("job")} /></label>
        <label>Node <input onInput={set("node")} /></label>
        <label>At least <select onChange={set("severity")}>
          <option value="">any severity</option>
          {(["info", "warning", "error"] as Severity[]).map((s) => <option key={s} value={s}>{s}</option>)}
        </select></label>
      </form>
      <EventFeed events={events.filter((e) => matchesFilter(e, filter))} />
    </>
  );
}
