#!/usr/bin/env bash
# Fails when the documentation points at something that is not there, naming file:line and the
# missing target:
# - a markdown link (`[text](path)`, `![alt](path)`) in README.md, docs/**/*.md or
#   bench/**/RESULTS.md whose file does not exist, or whose `#anchor` names no heading of that file;
# - a citation of a repository document and one of its sections, `docs/DESIGN.md "Heading"` (also
#   `DESIGN.md "Heading"`, `bench/x/RESULTS.md "Heading"`), anywhere in the sources, scripts and
#   docs, whose file does not exist or has no heading with exactly that text. A bare name resolves
#   to docs/NAME, then NAME at the root, then beside the citing file; a citation may wrap onto the
#   next comment line. In markdown, text inside `code spans` and fenced blocks is an example, not a
#   citation or a link, and is not checked;
# - outside the docs, a named document (`DESIGN.md`, `../shared/x.md`) that is not in the repository,
#   or a section cited by number (`STYLE.md #4`) rather than by its heading.
# Needs only bash, git and python3; reads tracked and new (not ignored) files; no network.
set -euo pipefail
cd "$(dirname "$0")/.."

git ls-files --cached --others --exclude-standard -z | python3 -c '
import os, re, sys

files = [f for f in sys.stdin.read().split("\0") if f and os.path.isfile(f)]
SOURCE_EXT = (".h", ".cpp", ".c", ".txt", ".cmake", ".sh", ".py", ".ts", ".tsx", ".mjs", ".js", ".md", ".json", ".yml")
FENCE = re.compile(r"^\s*(```|~~~)")
HEADING = re.compile(r"^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$")
LINK = re.compile(r"!?\[(?:[^\]\\]|\\.)*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
CITATION = re.compile(r"((?:[A-Za-z0-9_.-]+/)*[A-Za-z0-9_-]+\.md)\s+\"([^\"\n]+)\"")
COMMENT_LEAD = re.compile(r"^\s*(//+|#+|\*+|/\*+|--|;+)?\s*")
CODE_SPAN = re.compile(r"(`+)(.+?)\1")
MENTION = re.compile(r"(?<![\w./-])((?:\.\./|[A-Za-z0-9_.-]+/)*[A-Za-z0-9_-]+\.md)(?![\w-])( #[0-9]+)?")

def read(path):
    try:
        with open(path, encoding="utf-8") as f:
            return f.read().split("\n")
    except (UnicodeDecodeError, OSError):
        return None

def unfenced(lines):
    """(line number, text) of the lines outside fenced code blocks."""
    fenced = False
    for n, line in enumerate(lines, 1):
        if FENCE.match(line):
            fenced = not fenced
            continue
        if not fenced:
            yield n, line

def blank_code_spans(line):
    return CODE_SPAN.sub(lambda m: " " * len(m.group(0)), line)

headings_cache = {}
def headings(path):
    """The heading texts of a markdown file and their GitHub anchors."""
    if path not in headings_cache:
        texts, anchors, seen = set(), set(), {}
        for _, line in unfenced(read(path) or []):
            m = HEADING.match(line)
            if not m:
                continue
            text = " ".join(m.group(2).split())
            texts.add(text)
            slug = re.sub(r"[^\w\- ]", "", text.replace("`", "").lower()).replace(" ", "-")
            count = seen.get(slug, 0)
            seen[slug] = count + 1
            anchors.add(slug if count == 0 else f"{slug}-{count}")
        headings_cache[path] = (texts, anchors)
    return headings_cache[path]

def resolve_cited(name, citing):
    if "/" in name:
        candidates = [name, os.path.join(os.path.dirname(citing), name)]
    else:
        candidates = [os.path.join("docs", name), name, os.path.join(os.path.dirname(citing), name)]
    for c in candidates:
        c = os.path.normpath(c)
        if os.path.isfile(c):
            return c
    return None

problems = []
links = citations = 0

def is_doc(path):
    return path == "README.md" or (path.startswith("docs/") and path.endswith(".md")) or \
        (path.startswith("bench/") and path.endswith("/RESULTS.md"))

# Links.
for path in sorted(f for f in files if is_doc(f)):
    lines = read(path)
    for n, line in unfenced(lines):
        for m in LINK.finditer(blank_code_spans(line)):
            target = m.group(1)
            if re.match(r"^[a-z][a-z0-9+.-]*:", target):  # http:, https:, mailto:
                continue
            links += 1
            file_part, _, anchor = target.partition("#")
            linked = os.path.normpath(os.path.join(os.path.dirname(path), file_part)) if file_part else path
            if not os.path.exists(linked):
                problems.append(f"{path}:{n}: link to {target}: {linked} does not exist")
                continue
            if anchor and linked.endswith(".md") and os.path.isfile(linked) and anchor not in headings(linked)[1]:
                problems.append(f"{path}:{n}: link to {target}: {linked} has no heading with anchor #{anchor}")

# Citations of a document and its section.
for path in sorted(f for f in files if f.endswith(SOURCE_EXT) or os.path.basename(f) == "CMakeLists.txt"):
    if path == "deploy/check-docs.sh":
        continue  # its header shows the form with made-up names
    lines = read(path)
    if lines is None:
        continue
    markdown = path.endswith(".md")
    numbered = list(unfenced(lines)) if markdown else list(enumerate(lines, 1))
    for i, (n, line) in enumerate(numbered):
        text = blank_code_spans(line) if markdown else line
        following = ""
        if i + 1 < len(numbered):
            nxt = numbered[i + 1][1]
            following = " " + COMMENT_LEAD.sub("", blank_code_spans(nxt) if markdown else nxt)
        joined = text + following
        if not markdown:
            # Outside the docs, every named document must exist, and a section is cited by its heading.
            for m in MENTION.finditer(text):
                first = m.group(1).split("/")[0]
                if "/" in m.group(1) and "." in first and first not in (".", ".."):
                    continue  # a host name: a page elsewhere, not a document of ours
                if resolve_cited(m.group(1), path) is None:
                    problems.append(f"{path}:{n}: names {m.group(1)}, which is not in the repository")
                elif m.group(2):
                    problems.append(f"{path}:{n}: cites {m.group(1)}{m.group(2)}: cite a heading, as {m.group(1)} \"Heading\"")
        for m in CITATION.finditer(joined):
            if m.start() >= len(text):
                continue  # starts on the next line: checked there
            citations += 1
            name, section = m.group(1), " ".join(m.group(2).split())
            cited = resolve_cited(name, path)
            if cited is None:
                problems.append(f"{path}:{n}: cites {name} \"{section}\": {name} is not in the repository")
            elif section not in headings(cited)[0]:
                problems.append(f"{path}:{n}: cites {name} \"{section}\": {cited} has no such heading")

for p in problems:
    print(p)
if problems:
    print(f"check-docs: {len(problems)} missing, of {links} links and {citations} citations")
    sys.exit(1)
print(f"check-docs: {links} links and {citations} citations, every target found")
'
