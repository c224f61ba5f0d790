#!/usr/bin/env bash
# The operator's views of the built CLI on the sample host, against
# golden files (data/ops): devices (text, JSON), check and traits as
# JSON, pools and fleet pools as OpenMetrics (checked by promtool when
# installed), --output written atomically, config check's findings and
# exit statuses. VPA_TEST_REGENERATE=1 rewrites the golden files (review the
# diff).
set -euo pipefail

cli=${1:?usage: test-ops-cli.sh CLI}
data=${VPA_TEST_DATA:?}
golden=$data/ops
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
H=test://$data/hosts/dual-socket.xml
C=$data/hosts/dual-socket.conf
n=0
ok() { n=$((n + 1)); echo "ok $n $*"; }
notok() { n=$((n + 1)); echo "not ok $n $*"; failed=1; }
failed=0

# compare NAME FILE: FILE against $golden/NAME (with the data path as @DATA@)
compare() {
  sed "s|$data|@DATA@|g" "$2" > "$work/$1.got"
  if [ "${VPA_TEST_REGENERATE:-}" = 1 ]; then
    cp "$work/$1.got" "$golden/$1"
  fi
  if diff -u "$golden/$1" "$work/$1.got" >&2; then ok "$1"; else notok "$1"; fi
}
# run STATUS CMD...: stdout to $work/out, the exit status must be STATUS
run() {
  local want=$1 rc=0
  shift
  "$@" > "$work/out" 2> "$work/err" || rc=$?
  if [ "$rc" != "$want" ]; then
    echo "# $* exited $rc, expected $want: $(cat "$work/err")" >&2
    return 1
  fi
}

run 0 "$cli" devices -c "$H" --config "$C" && compare devices.txt "$work/out" || notok devices.txt
run 0 "$cli" devices -c "$H" --config "$C" --format json && compare devices.json "$work/out" || notok devices.json
run 0 "$cli" devices -c "$H" --config "$C" --alias QuickAssist && compare devices-alias.txt "$work/out" || notok devices-alias.txt
run 0 "$cli" traits -c "$H" --config "$C" --format json && compare traits.json "$work/out" || notok traits.json

# check --format json: a placed domain (exit 0), the unplaced one (exit 1,
# the report still on stdout as in text).
run 0 "$cli" place -c "$H" --config "$C" "$data/domains/demo.xml" && cp "$work/out" "$work/placed.xml"
run 0 "$cli" check -c "$H" --config "$C" --format json "$work/placed.xml" &&
  compare check-placed.json "$work/out" || notok check-placed.json
run 1 "$cli" check -c "$H" --config "$C" --format json "$data/domains/demo.xml" &&
  compare check-unplaced.json "$work/out" || notok check-unplaced.json

# OpenMetrics: the read time varies, everything else is golden. The
# hook's verdict counters of this machine stay out: a state-dir of its own.
cp "$C" "$work/metrics.conf"
printf '[hook]\nstate-dir=%s/state\n' "$work" >> "$work/metrics.conf"
run 0 "$cli" pools -c "$H" --config "$work/metrics.conf" --format openmetrics && cp "$work/out" "$work/pools.prom"
sed -E 's/^(virt_pci_affinity_inventory_read_seconds) .*/\1 @SECONDS@/' "$work/pools.prom" > "$work/pools.masked"
compare pools.prom "$work/pools.masked"
promcheck() {
  if ! command -v promtool >/dev/null; then
    ok "$1 # SKIP promtool not installed (Debian's prometheus package)"
  elif promtool check metrics < "$2" > "$work/promtool.out" 2>&1; then
    ok "$1: promtool check metrics is silent"
  else
    cat "$work/promtool.out" >&2
    notok "$1: promtool check metrics"
  fi
}
promcheck "pools --format openmetrics" "$work/pools.prom"

# --output: the same bytes, replaced by rename (a new inode), no
# temporary file left beside it.
mkdir "$work/textfile"
echo old > "$work/textfile/vpa.prom"
before=$(stat -c %i "$work/textfile/vpa.prom")
run 0 "$cli" pools -c "$H" --config "$work/metrics.conf" --format openmetrics --output "$work/textfile/vpa.prom"
after=$(stat -c %i "$work/textfile/vpa.prom")
if [ -s "$work/out" ]; then notok "--output printed on stdout"
elif [ "$(ls "$work/textfile")" != vpa.prom ]; then notok "--output left $(ls "$work/textfile")"
elif [ "$before" = "$after" ]; then notok "--output rewrote the file in place"
elif ! diff <(grep -v read_seconds "$work/textfile/vpa.prom") <(grep -v read_seconds "$work/pools.prom") >&2; then
  notok "--output wrote other metrics than stdout"
else ok "--output FILE: written by rename, nothing else left, same metrics"; fi

# --output keeps the mode of the file it replaces (a 0600 file is not
# made world-readable), and its owner when run as root; a new file is
# 0644 less the umask, as before.
umask 022
echo secret > "$work/textfile/private.prom"
chmod 0600 "$work/textfile/private.prom"
echo shared > "$work/textfile/shared.prom"
chmod 0664 "$work/textfile/shared.prom"
owner=
if [ "$(id -u)" = 0 ] && id nobody >/dev/null 2>&1; then
  chown nobody "$work/textfile/private.prom"
  owner=$(stat -c %U:%G "$work/textfile/private.prom")
fi
for f in private shared new; do
  run 0 "$cli" pools -c "$H" --config "$C" --format openmetrics --output "$work/textfile/$f.prom"
done
modes="$(stat -c %a "$work/textfile/private.prom") $(stat -c %a "$work/textfile/shared.prom") $(stat -c %a "$work/textfile/new.prom")"
if [ "$modes" != "600 664 644" ]; then notok "--output modes: $modes, not 600 664 644"
elif [ -n "$owner" ] && [ "$(stat -c %U:%G "$work/textfile/private.prom")" != "$owner" ]; then
  notok "--output did not keep the owner $owner: $(stat -c %U:%G "$work/textfile/private.prom")"
elif ! grep -q virt_pci_affinity "$work/textfile/private.prom"; then notok "--output wrote no metrics"
else ok "--output FILE: keeps the replaced file's mode${owner:+ and owner}; a new one is 0644"; fi
rm -f "$work/textfile/private.prom" "$work/textfile/shared.prom" "$work/textfile/new.prom"

# fleet pools: the same family with a host label.
for h in dual-socket no-numa; do
  "$cli" fleet sync --store "$work/fleet.db" -c "test://$data/hosts/$h.xml" \
    --config "$data/hosts/$h.conf" --host "$h" >/dev/null
done
run 0 "$cli" fleet pools --store "$work/fleet.db" --format openmetrics --output "$work/fleet.prom"
sed -E 's/^(virt_pci_affinity_fleet_last_sync_timestamp_seconds\{[^}]*\}) .*/\1 @TIME@/' \
  "$work/fleet.prom" > "$work/fleet.masked"
compare fleet-pools.prom "$work/fleet.masked"
promcheck "fleet pools --format openmetrics" "$work/fleet.prom"
# fleet filter as JSON: the nodes a host passes on are numbers.
run 0 "$cli" fleet filter --store "$work/fleet.db" --config "$C" --format json \
  "$data/domains/demo.xml" && compare fleet-filter.json "$work/out" || notok fleet-filter.json

# libvirt's hostdev networks (defined in the snapshot, read by libvirt's
# test driver): each network's PF and its free VFs in pools and devices.
N=test://$data/ops/hostdev-nets.xml
run 0 "$cli" pools -c "$N" --config "$C" && compare pools-networks.txt "$work/out" || notok pools-networks.txt
run 0 "$cli" devices -c "$N" --config "$C" --format json && compare devices-networks.json "$work/out" || notok devices-networks.json
run 0 "$cli" pools -c "$N" --config "$work/metrics.conf" --format openmetrics && cp "$work/out" "$work/nets.prom"
if grep -qxF 'virt_pci_affinity_hostdev_network_free_vfs{network="sriov-e810-p0",pf_dev="ens1f0"} 7' "$work/nets.prom"; then
  ok "hostdev network gauge"
else notok "hostdev network gauge: $(grep hostdev_network "$work/nets.prom")"; fi
promcheck "pools --format openmetrics with hostdev networks" "$work/nets.prom"

# Networks that cannot be listed: pools shows none, with one warning
# line, the same pools; a network port cannot be placed (exit 3).
Bn=test://$data/ops/broken-network.xml
run 0 "$cli" pools -c "$Bn" --config "$C" && "$cli" pools -c "$H" --config "$C" > "$work/plain-pools.txt" &&
  cmp -s "$work/out" "$work/plain-pools.txt" && [ "$(wc -l < "$work/err")" = 1 ] &&
  grep -q "^virt-pci-affinity: warning: hostdev networks not shown: cannot connect to " "$work/err" &&
  ok "networks that cannot be listed: the pools, one warning line" ||
  notok "networks that cannot be listed: $(cat "$work/err")"
run 3 "$cli" place -c "$Bn" --config "$C" "$data/ops/net-port-node1.xml" && [ ! -s "$work/out" ] &&
  ok "a network port where the networks cannot be listed: exit 3" ||
  notok "a network port where the networks cannot be listed: $(cat "$work/err")"

# A port on an <interface type='network'>: place chooses the hostdev
# network whose PF's VFs meet its physnet and policy and rewrites
# <source network>; placing again changes nothing; check verifies it on
# a free VF of that PF; define defines it on the test driver.
for d in node1 node0; do
  run 0 "$cli" place -c "$N" --config "$C" "$data/ops/net-port-$d.xml" &&
    compare "net-port-$d.placed.xml" "$work/out" || notok "net-port-$d.placed.xml"
  cp "$work/out" "$work/net-$d.xml"
  run 0 "$cli" place -c "$N" --config "$C" "$work/net-$d.xml" &&
    cmp -s "$work/out" "$work/net-$d.xml" && ok "net-port-$d placed again: unchanged" ||
    notok "net-port-$d placed again changed"
  run 0 "$cli" check -c "$N" --config "$C" "$work/net-$d.xml" &&
    compare "net-port-$d.check.txt" "$work/out" || notok "net-port-$d.check.txt"
done
run 1 "$cli" check -c "$N" --config "$C" "$data/ops/net-port-wrong-node.xml" &&
  compare net-port-wrong-node.check.txt "$work/out" || notok net-port-wrong-node.check.txt
run 0 "$cli" define -c "$N" --config "$C" "$data/ops/net-port-node1.xml" &&
  [ "$(cat "$work/out")" = netguest ] && ok "define of a network port on the test driver" ||
  notok "define of a network port: $(cat "$work/out" "$work/err")"

# config check: 0 clean, 1 warnings, 2 errors; the findings on stdout.
run 0 "$cli" config check -c "$H" --config "$C" && compare config-check-clean.txt "$work/out" || notok config-check-clean.txt
run 1 "$cli" config check -c "$H" --config "$golden/lint-warnings.conf" &&
  compare config-check-warnings.txt "$work/out" || notok config-check-warnings.txt
run 2 "$cli" config check -c "$H" --config "$golden/lint-errors.conf" &&
  compare config-check-errors.txt "$work/out" || notok config-check-errors.txt

echo "1..$n"
exit "$failed"
