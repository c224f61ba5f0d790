#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The project stands alone: no committed file may cite a document that is
# not in the repository (the interface and Nova's semantics are in
# docs/interface.md and docs/nova.md, the real-daemon recipe in
# docs/libvirtd.md). The patterns are spelt so that this file does not
# match them itself.
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

hits=$(files | xargs -0 grep -InE "$pattern" -- 2>/dev/null || true)
if [ -n "$hits" ]; then
  echo "check-standalone: these lines cite documents outside the repository; say it in docs/ instead:" >&2
  echo "$hits" >&2
  exit 1
fi
echo "check-standalone: no file cites a document outside the repository"
