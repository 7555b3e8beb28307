// The server pages a long list (the queue) needs for the rows in view.

export function pagesFor(firstRow: number, lastRow: number, pageSize: number): number[] {
  if (lastRow < firstRow) return [];
  const pages: number[] = [];
  for (let p = Math.floor(firstRow / pageSize); p <= Math.floor(lastRow / pageSize); p++) pages.push(p);
  return pages;
}

export function rowOf<T>(pages: Map<number, T[]>, row: number, pageSize: number): T | undefined {
  return pages.get(Math.floor(row / pageSize))?.[row % pageSize];
}
