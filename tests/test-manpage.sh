#!/usr/bin/env bash
# The manual pages: man renders them without a warning at 80 columns, and
# virt-pci-affinity(1) documents every command and every option the CLI's
# --help lists (the command table in hooks/vpa-cli.c is the one list: a
# command or option added there and not here fails this test).
set -euo pipefail

cli=${1:?usage: test-manpage.sh CLI PAGE...}
shift
n=0 failed=0
ok() { n=$((n + 1)); echo "ok $n $*"; }
notok() { n=$((n + 1)); echo "not ok $n $*"; failed=1; }

if ! command -v man >/dev/null; then
  echo "1..0 # SKIP man (man-db) is not installed"
  exit 0
fi
for page in "$@"; do
  warn=$(MANWIDTH=80 LC_ALL=C.UTF-8 man --warnings -E UTF-8 -l "$page" 2>&1 >/dev/null || true)
  if [ -z "$warn" ]; then ok "$(basename "$page"): man --warnings is silent"
  else notok "$(basename "$page"): $warn"; fi
done

page1=
for page in "$@"; do case $page in *.1) page1=$page ;; esac; done
[ -n "$page1" ] || { echo "1..$n"; exit "$failed"; }
# The source with roff's escapes for '-' and fonts taken out.
src=$(sed -e 's/\\-/-/g' -e 's/\\f[BIRP]//g' "$page1")

commands() { # the first word of each line of a Commands: section
  "$@" --help | awk '/^Commands:/ { on = 1; next } on && /^  [a-z]/ { print $1 } on && /^$/ { on = 0 }'
}
options() { # every --long option of a GOption --help
  "$@" --help | grep -oE '^ +(-[a-zA-Z], )?--[a-z][a-z-]*' | grep -oE -- '--[a-z][a-z-]*' | grep -vx -- --help || true
}
check_command() { # $1: "cmd" or "fleet cmd"
  if grep -qE "^\.B $1( |$)" <<<"$src"; then ok "command '$1' documented"
  else notok "command '$1' missing from $(basename "$page1")"; fi
  for opt in $(options "$cli" $1); do
    if grep -qF -- "$opt" <<<"$src"; then ok "$1 $opt documented"
    else notok "$1 $opt missing from $(basename "$page1")"; fi
  done
}
for cmd in $(commands "$cli"); do
  case $cmd in
    fleet) for sub in $(commands "$cli" fleet); do check_command "fleet $sub"; done ;;
    config) check_command "config check" ;;
    device) for sub in $(commands "$cli" device); do check_command "device $sub"; done ;;
    *) check_command "$cmd" ;;
  esac
done
echo "1..$n"
exit "$failed"
