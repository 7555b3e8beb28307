// Every view is a URL (history API): the daemon answers any view path with index.html.
import { useEffect, useState } from "preact/hooks";

const listeners = new Set<() => void>();

export function navigate(path: string): void {
  if (path === location.pathname + location.search) return;
  history.pushState(null, "", path);
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
