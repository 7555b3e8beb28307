// Every view is a URL (history API): the daemon answers any view path with index.html.
import { useEffect, useState } from "preact/hooks";

const listeners = new Set<() => void>();

// `replace`: change the URL without a new history entry (a filter typed a letter at a time).
export function navigate(path: string, replace = false): void {
  if (path === location.pathname + location.search) return;
  if (replace) history.replaceState(null, "", path);
  else history.pushState(null, "", path);
  listeners.forEach((l) => l());
}

export function usePath(): string {
  const [path, setPath] = useState(location.pathname);
  useEffect(() => {
    const update = () => setPath(location.pathname);
    listeners.add(update);
    addEventListener("popstate", update);
    return () => {
      listeners.delete(update);
      removeEventListener("popstate", update);
    };
  }, []);
  return path;
}

// The query string ("?state=FAILED"), for views whose filters live in the URL.
export function useSearch(): string {
  const [search, setSearch] = useState(location.search);
  useEffect(() => {
    const update = () => setSearch(location.search);
    listeners.add(update);
    addEventListener("popstate", update);
    return () => {
      listeners.delete(update);
      removeEventListener("popstate", update);
    };
  }, []);
  return search;
}

// Plain left clicks on same-origin links navigate in place; modified clicks open tabs as usual.
export function interceptLinks(): void {
  document.addEventListener("click", (e) => {
    if (e.defaultPrevented || e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
    const link = (e.target as Element).closest?.("a[href^='/']");
    if (!link) return;
    e.preventDefault();
    navigate(link.getAttribute("href")!);
  });
}
