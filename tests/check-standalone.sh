#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The project stands alone: no committed file may cite a document that is
# not in the repository (the interface and Nova's semantics are in
# docs/interface.md and docs/nova.md, the real-daemon recipe in
# docs/libvirtd.md), and every pointer into our docs (docs/NAME.md,
# "Section") names a section that exists. The patterns are spelt so that
# this file does not match them itself.
#
#   check-standalone.sh SOURCE_ROOT
set -euo pipefail

root=${1:?usage: check-standalone.sh SOURCE_ROOT}
cd "$root"
pattern='INTERFACE[.]md|NOVA-SEMANTIC[S]|LIBVIRTD[.]md|STYLE[.]md|[.][.]/shared|shared/(spec|docs|tools|conformance)/'

if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  files() { git ls-files -z --cached --others --exclude-standard; }
else
  files() { find . -path ./.git -prune -o -path ./build -prune -o -type f -print0; }
fi

status=0
hits=$(files | xargs -0 grep -InE "$pattern" -- 2>/dev/null || true)
if [ -n "$hits" ]; then
  echo "check-standalone: these lines cite documents outside the repository; say it in docs/ instead:" >&2
  echo "$hits" >&2
  status=1
else
  echo "check-standalone: no file cites a document outside the repository"
fi

# Every pointer into our docs, docs/NAME.md, "Section" (a comment's or a
# document's, also split over lines), names a document and a heading (or a
# paragraph's bold lead) that exist.
files | python3 -c '
import os, re, sys
heads = {}
for d in sorted(os.listdir("docs")):
    if d.endswith(".md"):
        with open("docs/" + d, encoding="utf-8") as fh:
            text = fh.read()
        # headings, and the bold lead of a paragraph or list item
        # ("**Diagnosis.** ...", "6. **Diagnosis.** ...", over lines too)
        found = re.findall(r"(?m)^#+\s+(?:\d+\.\s+)?(.*?)\s*$", text)
        found += re.findall(r"(?m)^\s*(?:[-*]\s+|\d+\.\s+)?\*\*([^*]+?)\*\*", text)
        heads["docs/" + d] = [" ".join(h.strip("`").rstrip(".").split()).lower() for h in found]
ref = re.compile(r"(docs/[a-z0-9-]+\.md)(?:,| \(|:)\s*((?:\"[^\"]+\"(?:,\s*|\s+and\s+|\s+to\s+)?)+)")
bad = 0
for f in sys.stdin.read().split("\0"):
    if not f or f.startswith("data/") or not os.path.isfile(f):
        continue
    try:
        with open(f, encoding="utf-8") as fh:
            text = fh.read()
    except (UnicodeDecodeError, OSError):
        continue
    flat = re.sub(r"\s*\n\s*(?:\*|#|//)?\s*", " ", text)
    for m in ref.finditer(flat):
        doc = m.group(1)
        if doc not in heads:
            print(f"{f}: {doc}: no such document", file=sys.stderr)
            bad += 1
            continue
        for title in re.findall(r"\"([^\"]+)\"", m.group(2)):
            # the title of a section, or part of a bold lead
            title_n = " ".join(title.split()).lower()
            if not any(title_n == h or title_n in h for h in heads[doc]):
                print(f"{f}: {doc}: no section \"{title}\"", file=sys.stderr)
                bad += 1
sys.exit(1 if bad else 0)
' || status=1
[ "$status" -ne 0 ] || echo "check-standalone: every docs/NAME.md, \"Section\" pointer names a section that exists"
exit "$status"
