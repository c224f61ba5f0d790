#!/usr/bin/env bash
# Reserved devices through the built CLI on the sample host, through
# libvirt's test:/// driver URI (docs/reservations.md): device
# quarantine, list and release in a state directory of the test's own;
# place and check never hand out or accept a reserved device; a damaged
# reservations file stops every command that hands devices out (exit 3)
# and is never overwritten.
set -uo pipefail

cli=${1:?usage: test-reserve-cli.sh CLI}
data=${VPA_TEST_DATA:?}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
H=test://$data/hosts/dual-socket.xml
C=$work/c.conf
state=$work/state
n=0 failed=0
ok() { n=$((n + 1)); echo "ok $n $*"; }
notok() { n=$((n + 1)); echo "not ok $n $*"; failed=1; }
# expect STATUS WHAT CMD...: stdout in $work/out, stderr in $work/err
expect() {
  local want=$1 what=$2 rc=0
  shift 2
  "$@" > "$work/out" 2> "$work/err" || rc=$?
  if [ "$rc" = "$want" ]; then ok "$what"
  else notok "$what: exit $rc, expected $want: $(head -c 300 "$work/err")"; fi
}
# has WHAT FILE PATTERN: a line of FILE matches the fixed string
has() {
  if grep -qF -- "$3" "$2"; then ok "$1"; else notok "$1: no '$3' in $(head -c 300 "$2")"; fi
}

# the sample host's configuration, its GPU one-time-use, our state dir
sed 's/^\[device-spec gpu\]$/[device-spec gpu]\none-time-use=true/' "$data/hosts/dual-socket.conf" > "$C"
printf '\n[hook]\nstate-dir=%s\n' "$state" >> "$C"

expect 0 "device list: none yet, no state directory" "$cli" device list --config "$C"
has "device list: the header" "$work/out" "ADDRESS  KIND  SINCE  DOMAIN  REASON"
expect 0 "place: the QuickAssist device is free" "$cli" place -c "$H" --config "$C" "$data/domains/demo.xml"
has "place: 0000:6b:00.0 placed" "$work/out" "address=\"0000:6b:00.0\""
cp "$work/out" "$work/placed.xml"

expect 0 "device quarantine" "$cli" device quarantine 0000:6b:00.0 --reason "QAT firmware hang" --config "$C"
has "device quarantine: says so" "$work/out" "0000:6b:00.0 quarantined"
expect 0 "device list" "$cli" device list --config "$C"
has "device list: the reason" "$work/out" "QAT firmware hang"
expect 0 "device list --format json" "$cli" device list --config "$C" --format json
has "device list --format json: the kind" "$work/out" '"kind": "quarantine"'

expect 0 "pools" "$cli" pools -c "$H" --config "$C" --group-by product
has "pools: the quarantined QuickAssist counted as reserved, not free" "$work/out" \
  "4940         1     0     0        0         1"
expect 0 "pools --format json" "$cli" pools -c "$H" --config "$C" --format json
has "pools --format json: reserved" "$work/out" '"reserved": 1'
expect 0 "pools --format openmetrics" "$cli" pools -c "$H" --config "$C" --format openmetrics
has "pools --format openmetrics: state reserved" "$work/out" \
  'product_id="4940",dev_type="type-PCI",numa_node="0",socket="0",physical_network="",state="reserved"} 1'
expect 0 "devices" "$cli" devices -c "$H" --config "$C" --alias QuickAssist
has "devices: state reserved" "$work/out" "0000:6b:00.0  8086:4940  type-PCI  0     0       -   -     reserved  -"
expect 0 "devices --format json" "$cli" devices -c "$H" --config "$C" --format json
has "devices --format json: the reservation's reason" "$work/out" '"reason": "QAT firmware hang"'
expect 1 "place: no device for QuickAssist while it is quarantined" \
  "$cli" place -c "$H" --config "$C" "$data/domains/demo.xml"
if [ ! -s "$work/out" ]; then ok "place: nothing on stdout"; else notok "place: nothing on stdout"; fi
expect 1 "place --explain: no device for QuickAssist" \
  "$cli" place --explain -c "$H" --config "$C" "$data/domains/demo.xml"
has "place --explain: the pool's devices counted as reserved, not blocked" "$work/err" \
  "pool 8086:4940 type-PCI node 0 socket 0 free 0: 0 free (0 held, 0 blocked, 1 reserved)"
expect 1 "check: the placed domain's device is reserved" \
  "$cli" check -c "$H" --config "$C" "$work/placed.xml"
has "check: the report names the reservation" "$work/out" \
  "is reserved: quarantined since"
has "check: and the command that lifts it" "$work/out" \
  "(virt-pci-affinity device release 0000:6b:00.0 returns it)"

expect 0 "device release" "$cli" device release 0000:6b:00.0 --config "$C"
has "device release: says so" "$work/out" "0000:6b:00.0 released"
expect 0 "check: the device is free again" "$cli" check -c "$H" --config "$C" "$work/placed.xml"
expect 2 "device release: a device that is not reserved" \
  "$cli" device release 0000:6b:00.0 --config "$C"
has "device release: says which" "$work/err" "0000:6b:00.0 is not reserved"

# A one-time-use GPU the hook recorded for gpu-vm: reserved for others.
printf '# virt-pci-affinity reservations 1\n0000:ca:00.0 one-time-use 1718000000 - gpu-vm\n' > "$state/reservations"
sed 's/aliases="QuickAssist:1"/aliases="GPU:1"/; s/policy="preferred"//' "$data/domains/demo.xml" > "$work/gpu.xml"
expect 1 "place: the used one-time-use GPU is not handed out" \
  "$cli" place -c "$H" --config "$C" "$work/gpu.xml"
sed 's|<name>[^<]*</name>|<name>gpu-vm</name>|' "$work/gpu.xml" > "$work/gpu-vm.xml"
expect 1 "place: not even to the domain that used it, once it names it no more" \
  "$cli" place -c "$H" --config "$C" "$work/gpu-vm.xml"
expect 0 "device list: the one-time-use record" "$cli" device list --config "$C"
has "device list: its domain" "$work/out" "one-time-use  2024-06-10T06:13:20Z  gpu-vm"

# Damaged: every command that hands devices out stops; nothing rewrites it.
printf '# virt-pci-affinity reservations 1\n0000:ca:00.0 one-time-use\n' > "$state/reservations"
cp "$state/reservations" "$work/damaged"
expect 3 "place: damaged reservations, exit 3" "$cli" place -c "$H" --config "$C" "$data/domains/demo.xml"
has "place: the one line names the file" "$work/err" \
  "virt-pci-affinity: cannot check reserved devices, so none is handed out: $state/reservations:2:"
expect 3 "pools: damaged reservations, exit 3" "$cli" pools -c "$H" --config "$C"
expect 3 "device quarantine: never over a damaged file" \
  "$cli" device quarantine 0000:6b:00.0 --reason x --config "$C"
if cmp -s "$state/reservations" "$work/damaged"; then ok "damaged file untouched"
else notok "damaged file untouched"; fi

expect 2 "device quarantine: --reason is required" "$cli" device quarantine 0000:6b:00.0 --config "$C"
expect 2 "device release: not an address" "$cli" device release nothing --config "$C"
expect 2 "device: unknown command" "$cli" device frob

echo "1..$n"
exit "$failed"
