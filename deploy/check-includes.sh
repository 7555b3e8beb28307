#!/usr/bin/env bash
# Fails on an `#include "folder/..."` that crosses a line of the folder map (cmake/folder_map.txt,
# the same file CMake checks links against): a library folder includes only itself and the folders
# its line names, and tests/unit/<lib>/ what <lib> may use plus <lib> (with its sub-folders) and the
# tests' own helpers. A file or an include belongs to the deepest folder with a line (daemon/api/
# before daemon/), so a sub-folder library is walled off from its parent like any other folder.
# Prints each offending include as file:line. `--map` prints the folder dependencies as they are
# (folder -> folder: number of includes) instead of checking.
set -euo pipefail
cd "$(dirname "$0")/.."
mode=check
if [[ ${1:-} == --map ]]; then mode=map; fi

# Tracked and new (not ignored) sources, so an include is caught before it is committed.
git ls-files --cached --others --exclude-standard -- '*.h' '*.cpp' |
  xargs grep -Hn '^[[:space:]]*#[[:space:]]*include[[:space:]]*"[a-z_]*/' |
  awk -v mode="$mode" -v map_file=cmake/folder_map.txt '
    BEGIN {
      while ((getline line < map_file) > 0) {
        if (line ~ /^[a-z_\/]+:/) {
          folder = line; sub(/:.*/, "", folder)
          mapped[folder] = 1
          uses = line; sub(/^[^:]*:/, "", uses)
          n = split(uses, names, " ")
          for (i = 1; i <= n; i++) may_use[folder, names[i]] = 1
        }
      }
      if (length(mapped) == 0) { print "check-includes: no folders in " map_file > "/dev/stderr"; exit 2 }
    }
    # The deepest folder with a line that holds `path` (a file or an included header), or "".
    function folder_of(path,    parts, n, i, prefix, found) {
      n = split(path, parts, "/")
      prefix = ""; found = ""
      for (i = 1; i < n; i++) {
        prefix = (i == 1 ? parts[1] : prefix "/" parts[i])
        if (mapped[prefix]) found = prefix
      }
      return found
    }
    {
      # file:line:#include "target/..."
      split($0, parts, ":")
      file = parts[1]; lineno = parts[2]
      header = $0; sub(/^[^"]*"/, "", header); sub(/".*/, "", header)
      target = folder_of(header)
      if (target == "" && header ~ /^tests\//) target = "tests"
      n = split(file, path, "/")
      # Whose rules apply: a library folder, or tests/unit/<lib>/ testing one (and its sub-folders).
      test = 0
      owner = folder_of(file)
      if (owner == "" && path[1] == "tests" && path[2] == "unit" && n > 3 && mapped[path[3]]) {
        owner = path[3]; test = 1
        if (target == owner || index(target, owner "/") == 1) next
      }
      if (owner == "") next
      if (target == owner || target == "") next
      if (mode == "map") { count[(test ? "tests/unit/" : "") owner " -> " target]++; next }
      if (may_use[owner, target] || (test && target == "tests")) next
      printf "%s:%s: %s/ may not include %s/ (cmake/folder_map.txt): %s\n", file, lineno, (test ? "tests/unit/" : "") owner, target, substr($0, length(file) + length(lineno) + 3)
      bad++
    }
    END {
      if (mode == "map") { for (edge in count) printf "%s: %d\n", edge, count[edge]; exit 0 }
      if (bad) { printf "check-includes: %d include(s) cross the folder map\n", bad > "/dev/stderr"; exit 1 }
      print "check-includes: every include stays inside the folder map"
    }' | { if [[ $mode == map ]]; then sort; else cat; fi; }
