// Styles are set through the DOM (Preact writes element.style), which the daemon's CSP allows; a
// style attribute in markup would not be.
// Rows of a long list (10,000 pending jobs) rendered only where the viewport is: fixed row height,
// a spacer for the rest, so scrolling stays smooth.
import type { ComponentChildren } from "preact";
import { useEffect, useState } from "preact/hooks";

export function VirtualList<T>({ items, rowHeight, height, row, label, onRange }: {
  items: T[]; rowHeight: number; height: number; row: (item: T, index: number) => ComponentChildren; label: string;
  onRange?: (first: number, last: number) => void;  // the rows rendered, for loading them
}) {
  const [top, setTop] = useState(0);
  const first = Math.max(0, Math.floor(top / rowHeight) - 5);
  const count = Math.ceil(height / rowHeight) + 10;
  const shown = items.slice(first, first + count);
  useEffect(() => onRange?.(first, first + shown.length - 1), [first, shown.length]);
  return (
    <div class="virtual" role="list" aria-label={label} tabIndex={0}
         style={{ height: `${Math.min(height, items.length * rowHeight + 2)}px` }}
         onScroll={(e) => setTop((e.currentTarget as HTMLElement).scrollTop)}>
      <div style={{ height: `${items.length * rowHeight}px` }} class="virtual-space">
        {shown.map((item, i) => (
          <div role="listitem" class="virtual-row"
               style={{ transform: `translateY(${(first + i) * rowHeight}px)` }}>
            {row(item, first + i)}
          </div>
        ))}
      </div>
    </div>
  );
}
