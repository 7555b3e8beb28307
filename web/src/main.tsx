import { render } from "preact";
import { useEffect, useRef, useState } from "preact/hooks";
import { apiUrl, ApiError, get } from "./api";
import { App, type AppState, useApi } from "./app-state";
import { pollIntervalMs, startLive, type LiveState } from "./live";
import { addEvents } from "./logic/events";
import { timeZoneLabel } from "./logic/format";
import { storeProblemBanner } from "./logic/store-problem";
import type { TrainyardEvent, Who } from "./logic/types";
import { interceptLinks, navigate, usePath } from "./router";
import { signOut, token } from "./session";
import "./style.css";
import { Events } from "./views/events";
import { Canaries, Health } from "./views/health";
import { JobPage } from "./views/job";
import { JobList } from "./views/job-list";
import { Login } from "./views/login";
import { NodePage, Nodes } from "./views/nodes";
import { Overview } from "./views/overview";
import { Queue } from "./views/queue";
import { Shares } from "./views/shares";

const views: [string, string][] = [
  ["/", "Overview"], ["/jobs", "Jobs"], ["/nodes", "Nodes"], ["/queue", "Queue"], ["/shares", "Fair share"],
  ["/health", "Health"], ["/canaries", "Canaries"], ["/events", "Events"],
];

function View({ path }: { path: string }) {
  const [, section, arg] = path.split("/");
  if (section === "jobs" && arg && /^\d+(_\d+)?$/.test(arg)) return <JobPage id={arg} />;
  if (section === "nodes" && arg) return <NodePage name={decodeURIComponent(arg)} />;
  switch (path) {
    case "/": return <Overview />;
    case "/jobs": return <JobList />;
    case "/nodes": return <Nodes />;
    case "/queue": return <Queue />;
    case "/shares": return <Shares />;
    case "/health": return <Health />;
    case "/canaries": return <Canaries />;
    case "/events": return <Events />;
    default: return <p>No such page. <a href="/">Overview</a></p>;
  }
}

const banner: Partial<Record<LiveState, string>> = {
  connecting: "Connecting to the event stream…",
  reconnecting: "Connection to the daemon lost: reconnecting…",
};

// GET /v1/events pages oldest first: walk to the end, keeping the newest `keep`. A daemon without
// the events API (404) has no history to show.
async function newestEvents(keep: number): Promise<TrainyardEvent[]> {
  let kept: TrainyardEvent[] = [];
  let cursor: string | undefined;
  for (let page = 0; page < 50; page++) {
    const r = await get(apiUrl("/v1/events", { query: { limit: 1000, cursor } }));
    kept = [...kept, ...r.events].slice(-keep);
    if (!r.next) break;
    cursor = r.next;
  }
  return kept;
}

// The store refusing writes (GET /v1/cluster), on every page. No event can say so while it lasts
// (events are stored too), so it is asked again every poll period as well as on each refresh.
function StoreProblemBanner() {
  const cluster = useApi(apiUrl("/v1/cluster"));
  const { reload } = cluster;
  useEffect(() => {
    const timer = setInterval(reload, pollIntervalMs);
    return () => clearInterval(timer);
  }, []);
  const text = storeProblemBanner(cluster.data, new Date());
  return text ? <div class="banner" role="alert">{text}</div> : null;
}

// Refreshes at most twice a second however many events arrive, and within 1 s of the first.
const refreshDelayMs = 300;

function Shell({ who, onSignOut }: { who: Who; onSignOut: (notice?: string) => void }) {
  const path = usePath();
  const [live, setLive] = useState<LiveState>("connecting");
  const [events, setEvents] = useState<TrainyardEvent[]>([]);
  const [refresh, setRefresh] = useState(0);
  const pending = useRef<ReturnType<typeof setTimeout>>();
  useEffect(() => {
    const bump = () => {
      if (pending.current) return;
      pending.current = setTimeout(() => {
        pending.current = undefined;
        setRefresh((n) => n + 1);
      }, refreshDelayMs);
    };
    void newestEvents(200).then((history) => setEvents((feed) => addEvents(feed, history, 200)), () => undefined);
    return startLive({
      onEvent: (e) => {
        setEvents((feed) => addEvents(feed, [e], 200));
        bump();
      },
      onState: (s) => {
        setLive(s);
        if (s === "unauthorized") onSignOut("Your token is no longer valid (revoked or expired). Sign in again.");
      },
      onPoll: bump,
    });
  }, []);
  const state: AppState = { who, live, events, refresh };
  return (
    <App.Provider value={state}>
      <a class="skip" href="#main">Skip to content</a>
      <header>
        <a href="/" class="brand">Trainyard</a>
        <nav aria-label="Views">
          {views.map(([href, label]) => (
            <a key={href} href={href} aria-current={(href === "/" ? path === "/" : path.startsWith(href)) ? "page" : undefined}>{label}</a>
          ))}
        </nav>
        <span class="who" data-role={who.role}>{who.user} ({who.role})</span>
        <span class={`live live-${live}`} title="How this page learns of changes">
          {live === "live" ? "live" : live === "polling" ? "refreshing every 10 s" : live}
        </span>
        <button type="button" onClick={() => onSignOut()}>Sign out</button>
      </header>
      {banner[live] && <div class="banner" role="status">{banner[live]}</div>}
      <StoreProblemBanner />
      <main id="main" tabIndex={-1}><View path={path} /></main>
      <footer class="hint">Times are in {timeZoneLabel()}, 24-hour; hover one for UTC.</footer>
    </App.Provider>
  );
}

function Root() {
  const [who, setWho] = useState<Who | null>(null);
  const [checking, setChecking] = useState(token() !== null);
  const [notice, setNotice] = useState<string>();
  useEffect(() => {
    if (!token()) return;
    get(apiUrl("/v1/whoami")).then(setWho, (e) => {
      signOut();
      setNotice(e instanceof ApiError && e.status === 401
        ? "Your token is no longer valid (revoked or expired). Sign in again." : String(e.message ?? e));
    }).finally(() => setChecking(false));
  }, []);
  if (checking) return <p class="hint">Signing in…</p>;
  if (!who) return <Login notice={notice} onSignedIn={(w) => { setNotice(undefined); setWho(w); }} />;
  return <Shell who={who} onSignOut={(n) => { signOut(); setNotice(n); setWho(null); navigate("/"); }} />;
}

interceptLinks();
render(<Root />, document.getElementById("app")!);
