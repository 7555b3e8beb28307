// What every view shares: who is signed in, the live connection's state, the newest events, and a
// refresh counter that moves when something changed (an event, or the 10 s refresh without a stream).
import { createContext } from "preact";
import { useContext, useEffect, useState } from "preact/hooks";
import { explain, get, type Answer, type ApiUrl, type ReadablePath } from "./api";
import type { LiveState } from "./live";
import type { TrainyardEvent, Who } from "./logic/types";

export interface AppState {
  who: Who;
  live: LiveState;
  events: TrainyardEvent[];
  refresh: number;
}

export const App = createContext<AppState>(null as unknown as AppState);

export function useApp(): AppState {
  return useContext(App);
}

// `path`: the request `data` answered (the one before while a new path loads).
export interface Loaded<T> { data?: T; error?: string; path?: string; reload(): void }

// Fetches `path` now and again whenever the refresh counter moves; keeps the last good data while
// a refresh is under way, so views do not flicker.
// `live`: fetched again on every refresh (the event stream's changes); else once per path.
export function useApi<P extends ReadablePath>(path: ApiUrl<P> | null, live = true): Loaded<Answer<P>> {
  const { refresh } = useApp();
  const [state, setState] = useState<{ data?: Answer<P>; error?: string; path?: string }>({});
  const [own, setOwn] = useState(0);
  useEffect(() => {
    if (!path) return;
    let current = true;
    get(path).then(
      (data) => current && setState({ data, path }),
      (e) => current && setState((s) => ({ data: s.data, path: s.path, error: explain(e) })),
    );
    return () => {
      current = false;
    };
  }, [path, live ? refresh : 0, own]);
  return { ...state, reload: () => setOwn((n) => n + 1) };
}
