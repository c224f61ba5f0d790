#!/usr/bin/env bash
# Real-daemon suite for `fleet sync --watch` on qemu:///system with the
# devices from a snapshot (--inventory) and a SQLite store: the rows
# follow a domain holding a VF as it is defined and undefined (100
# events, median and maximum event-to-row latency printed, each under
# 2 s); after libvirtd restarts (only a daemon tests/libvirtd/start.sh
# started) the watcher reconnects, resyncs in full (a row spoiled while
# the daemon was down is rewritten) and follows events again; SIGTERM
# ends it with status 0.
# Needs root and a running libvirtd (tests/libvirtd/start.sh); exits 77
# (skip) otherwise.
set -euo pipefail

vpa=${1:?usage: test-fleet-watch.sh VIRT-PCI-AFFINITY}
. "$(dirname "$0")/lib.sh" vpa-fleetwatch
command -v sqlite3 >/dev/null || { echo "SKIP: sqlite3 is not installed"; exit 77; }

state=${VPA_LIBVIRTD_STATE:-/run/vpa-test-libvirtd}
store=$work/fleet.db
host=watch-test
dom=$prefix-holder

sql() { sqlite3 -cmd '.timeout 5000' "$store" "$1"; }
now_ms() { date +%s%3N; }

# Waits (at most LIMIT ms, default 10 s) until SQL prints WANT; prints
# the wait in ms.
wait_for() {
  local query=$1 want=$2 limit=${3:-10000} start got
  start=$(now_ms)
  while :; do
    got=$(sql "$query" 2>/dev/null || true)
    [ "$got" = "$want" ] && break
    [ $(($(now_ms) - start)) -lt "$limit" ] || fail "waited $limit ms for '$want' from '$query', last '$got'"
    sleep 0.02
  done
  echo $(($(now_ms) - start))
}

"$vpa" fleet sync --watch --store "$store" -c "$uri" --inventory "$snapshot" \
  --host "$host" 2>"$work/watch.err" &
watcher=$!
trap 'kill "$watcher" 2>/dev/null || true; cleanup' EXIT
wait_for "SELECT COUNT(*) FROM hosts WHERE name = '$host'" 1 >/dev/null
addr=$(sql "SELECT MIN(address) FROM devices WHERE state = 'free' AND dev_type = 'type-VF'")
[ -n "$addr" ] || fail "no free VF in the rows"
held="SELECT COALESCE(held_by, '-') FROM devices WHERE address = '$addr'"
IFS=':.' read -r d b s f <<<"$addr"
cat >"$work/holder.xml" <<XML
<domain type='qemu'>
  <name>$dom</name>
  <memory unit='MiB'>64</memory>
  <os><type arch='x86_64' machine='pc'>hvm</type></os>
  <devices>
    <emulator>/usr/bin/qemu-system-x86_64</emulator>
    <hostdev mode='subsystem' type='pci' managed='yes'>
      <source><address domain='0x$d' bus='0x$b' slot='0x$s' function='0x$f'/></source>
    </hostdev>
  </devices>
</domain>
XML

# 1. Define and undefine, 50 times: 100 events.
: >"$work/waits"
for _ in $(seq 50); do
  virsh -c "$uri" define "$work/holder.xml" >/dev/null || fail "define $dom"
  wait_for "$held" "$dom" >>"$work/waits"
  virsh -c "$uri" undefine "$dom" >/dev/null || fail "undefine $dom"
  wait_for "$held" - >>"$work/waits"
done
median=$(sort -n "$work/waits" | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }')
max=$(sort -n "$work/waits" | tail -1)
[ "$max" -lt 2000 ] || fail "an event took $max ms to reach the rows"
echo "ok 1 100 events reach the rows: median $median ms, max $max ms"

# 2. libvirtd restarts: a full resync, then events again.
if [ -s "$state/libvirtd.pid" ] && kill -0 "$(cat "$state/libvirtd.pid")" 2>/dev/null; then
  kill "$(cat "$state/libvirtd.pid")"
  for _ in $(seq 100); do virsh -c "$uri" version >/dev/null 2>&1 || break; sleep 0.1; done
  sql "UPDATE devices SET held_by = 'spoiled' WHERE address = '$addr'"
  LIBVIRT_LOG_OUTPUTS="3:file:$state/libvirtd.log" libvirtd -d -p "$state/libvirtd.pid"
  # Reconnect attempts back off 0.5, 1, 2, 4, 8 s: within 30 s.
  wait_for "$held" - 30000 >/dev/null
  virsh -c "$uri" define "$work/holder.xml" >/dev/null || fail "define $dom after the restart"
  wait_for "$held" "$dom" >/dev/null
  virsh -c "$uri" undefine "$dom" >/dev/null
  wait_for "$held" - >/dev/null
  echo "ok 2 after a libvirtd restart: resynced, and events reach the rows"
else
  echo "ok 2 # SKIP libvirtd was not started by tests/libvirtd/start.sh: not restarting it"
fi

# 3. SIGTERM: a clean exit.
kill -TERM "$watcher"
rc=0
wait "$watcher" || rc=$?
[ "$rc" = 0 ] || fail "the watcher exited $rc on SIGTERM: $(cat "$work/watch.err")"
echo "ok 3 SIGTERM ends the watcher with status 0"
echo "1..3"
