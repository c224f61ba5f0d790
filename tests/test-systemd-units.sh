#!/usr/bin/env bash
# The fleet units (data/systemd): systemd-analyze verify accepts them
# without a warning (every sandboxing key known, ExecStart resolvable),
# the watcher's ExecStart is fleet sync --watch, and the sandbox's
# exposure score is reported.
#   test-systemd-units.sh CLI UNITDIR        (TAP on stdout)
set -euo pipefail

cli=${1:?usage: test-systemd-units.sh CLI UNITDIR}
src=${2:?usage: test-systemd-units.sh CLI UNITDIR}
if ! command -v systemd-analyze >/dev/null; then
  echo "1..0 # SKIP systemd-analyze is not installed"
  exit 0
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
n=0 failed=0
ok() { n=$((n + 1)); echo "ok $n $*"; }
notok() { n=$((n + 1)); echo "not ok $n $*"; failed=1; }

for f in "$src"/*.service.in; do
  unit=$(basename "$f" .in)
  sed -e "s|@bindir@/virt-pci-affinity|$cli|" -e "s|@sysconfdir@|$tmp|" "$f" >"$tmp/$unit"
done
cp "$src"/*.timer "$tmp/"
for unit in "$tmp"/*.service "$tmp"/*.timer; do
  name=$(basename "$unit")
  # verify loads the unit with its dependencies; their absence on a
  # build machine is not the unit's fault.
  out=$(cd "$tmp" && SYSTEMD_LOG_LEVEL=warning systemd-analyze verify --man=no "$name" 2>&1 |
    grep -vE "(libvirtd|virtqemud|virtnodedevd|network-online)\.(service|target)" || true)
  if [ -z "$out" ]; then ok "$name: systemd-analyze verify is silent"
  else notok "$name: $(tr '\n' ' ' <<<"$out")"; fi
done
if grep -q -- "fleet sync --watch --store \${FLEET_STORE}" "$tmp/virt-pci-affinity-fleet-watch.service"; then
  ok "the watcher runs fleet sync --watch"
else notok "the watcher's ExecStart"; fi
for unit in "$tmp"/*.service; do
  name=$(basename "$unit")
  score=$(cd "$tmp" && systemd-analyze security --offline=true "$name" 2>/dev/null |
    sed -n 's/.*Overall exposure level for .*: \([0-9.]*\).*/\1/p' || true)
  if [ -z "$score" ]; then ok "$name: exposure not computed # SKIP systemd-analyze security --offline"
  elif awk -v s="$score" 'BEGIN { exit !(s <= 3.0) }'; then ok "$name: exposure $score (at most 3.0)"
  else notok "$name: exposure $score, more than 3.0"; fi
done
echo "1..$n"
exit "$failed"
