// Where two texts first differ, by line, so a stale-file failure in CI points at the change instead
// of only saying that there is one.

// The first line (1-based) at which `actual` departs from `expected`, with both versions of it,
// each with its line ending (so a missing final newline or a CRLF shows); undefined for a side that
// has already ended. null when the texts are equal.
export function firstDifference(expected, actual) {
  if (expected === actual) return null;
  const want = lines(expected);
  const have = lines(actual);
  let i = 0;
  while (want[i] === have[i]) i++;
  return { line: i + 1, expected: want[i], actual: have[i] };
}

function lines(text) {
  return text.split(/(?<=\n)/);
}
