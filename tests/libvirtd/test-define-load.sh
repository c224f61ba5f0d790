#!/usr/bin/env bash
# Load and failure test of `virt-pci-affinity define` on a real libvirtd
# (docs/reliability.md):
#   1. 32 concurrent defines compete for 16 free VFs: exactly 16 are
#      defined, with 16 distinct VFs; the other 16 exit 1, print nothing
#      on stdout and leave no domain behind.
#   2. Defines SIGKILLed at random moments (holding the define lock, or
#      inside virDomainDefineXML): no VF is ever held twice, and the lock
#      dies with its holder, so the next define goes through at once.
# Needs root and a running libvirtd (tests/libvirtd/start.sh); exits 77
# (skip) otherwise. Bounded: every define has a 60 s timeout.
set -euo pipefail

vpa=${1:?usage: test-define-load.sh VIRT-PCI-AFFINITY GENHOST}
genhost=${2:?usage: test-define-load.sh VIRT-PCI-AFFINITY GENHOST}
uri=qemu:///system
prefix=vpa-load-$$
work=$(mktemp -d)
# Nothing is assignable without a device spec: admit every device.
printf '# every device of the generated host\n[device-spec all]\n' > "$work/vpa.conf"
export VPA_CONFIG=$work/vpa.conf

if [ "$(id -u)" -ne 0 ]; then
  echo "SKIP: the libvirtd suite needs root (run tools/run-tests as root)"
  exit 77
fi
if ! virsh -c "$uri" version >/dev/null 2>&1; then
  echo "SKIP: no libvirtd answers on $uri (start it with tests/libvirtd/start.sh)"
  exit 77
fi

ours() { virsh -c "$uri" list --all --name | grep "^$prefix-" || true; }
cleanup() {
  for dom in $(ours); do virsh -c "$uri" undefine "$dom" >/dev/null 2>&1 || true; done
  rm -rf "$work"
}
trap cleanup EXIT
fail() { echo "not ok: $*" >&2; exit 1; }

# A host of 16 VFs (two PFs of 8, one per node), written by the project's
# own generator, and a device spec that puts every VF in the inventory.
snapshot=$work/host.xml
python3 "$genhost" --vfs 16 --nodes 2 --sockets 2 --vfs-per-pf 8 --hostname load \
  -o "$snapshot" >/dev/null
nvf=$(grep -c "<capability type='phys_function'>" "$snapshot")
[ "$nvf" -eq 16 ] || fail "expected 16 VFs in the generated host, found $nvf"

domain_xml() {
  cat <<XML
<domain type='qemu'>
  <name>$1</name>
  <metadata>
    <vpa:affinity xmlns:vpa="http://virt-pci-affinity.org/xmlns/libvirt/domain/1.0">
      <vpa:port device="ua-net0" vnic-type="direct"/>
    </vpa:affinity>
  </metadata>
  <memory unit='MiB'>64</memory>
  <os><type arch='x86_64' machine='pc'>hvm</type></os>
  <devices>
    <emulator>/usr/bin/qemu-system-x86_64</emulator>
    <interface type='hostdev' managed='yes'>
      <mac address='52:54:00:bb:$(printf '%02x:%02x' "$2" "$3")'/>
      <alias name='ua-net0'/>
    </interface>
  </devices>
</domain>
XML
}

placed_addresses() {
  for dom in $(ours); do
    virsh -c "$uri" dumpxml --inactive "$dom" | xmllint --xpath \
      "string(//*[local-name()='placed']/@address)" -
    echo
  done | sed '/^$/d' | sort
}

define() { # NAME ROUND I -> runs in the background, pid in $!
  domain_xml "$1" "$2" "$3" > "$work/$1.xml"
  timeout 60 "$vpa" define -c "$uri" --inventory "$snapshot" "$work/$1.xml" \
    > "$work/$1.out" 2> "$work/$1.err" &
}

# 1. 32 concurrent defines for 16 VFs.
pids=()
for i in $(seq 1 32); do define "$prefix-a$i" 1 "$i"; pids+=($!); done
ok=0; refused=0
for i in $(seq 1 32); do
  rc=0; wait "${pids[$((i - 1))]}" || rc=$?
  name=$prefix-a$i
  case $rc in
    0) ok=$((ok + 1))
       [ "$(cat "$work/$name.out")" = "$name" ] || fail "define $i printed '$(cat "$work/$name.out")'" ;;
    1) refused=$((refused + 1))
       [ ! -s "$work/$name.out" ] || fail "define $i failed but printed: $(cat "$work/$name.out")"
       [ "$(wc -l < "$work/$name.err")" -eq 1 ] || fail "define $i: not one stderr line: $(cat "$work/$name.err")"
       if virsh -c "$uri" dominfo "$name" >/dev/null 2>&1; then
         fail "define $i failed but left a domain behind"
       fi ;;
    *) fail "define $i exited $rc: $(cat "$work/$name.err")" ;;
  esac
done
{ [ "$ok" -eq 16 ] && [ "$refused" -eq 16 ]; } || fail "$ok defined, $refused refused (want 16 and 16); refusals: $(cat "$work/$prefix"-a*.err 2>/dev/null | sort | uniq -c | head -3 | tr '\n' ' ')"
addrs=$(placed_addresses)
[ "$(echo "$addrs" | wc -l)" -eq 16 ] || fail "expected 16 placed domains, got: $addrs"
[ "$(echo "$addrs" | uniq | wc -l)" -eq 16 ] || fail "a VF was handed out twice: $addrs"
echo "ok 1 32 concurrent defines for 16 VFs: 16 defined with distinct VFs, 16 refused"

# 2. SIGKILLed defines: free every VF, start 24 defines and kill every
#    third one after 0-300 ms; then check, and define once more.
for dom in $(ours); do virsh -c "$uri" undefine "$dom" >/dev/null; done
pids=()
for i in $(seq 1 24); do define "$prefix-k$i" 2 "$i"; pids+=($!); done
for i in $(seq 3 3 24); do
  sleep "0.$((RANDOM % 3))$((RANDOM % 10))"
  # timeout's child is the define; kill that one, not timeout.
  pkill -KILL -P "${pids[$((i - 1))]}" 2>/dev/null || true
done
for p in "${pids[@]}"; do wait "$p" || true; done
addrs=$(placed_addresses)
n=$(echo "$addrs" | sed '/^$/d' | wc -l)
[ "$n" -le 16 ] || fail "$n domains hold VFs, only 16 exist"
[ "$(echo "$addrs" | uniq | wc -l)" -eq "$(echo "$addrs" | wc -l)" ] ||
  fail "a VF is held twice after killed defines: $addrs"
# A domain defined without our record would hold a VF we cannot see.
for dom in $(ours); do
  # (Not "virsh | grep -q" under pipefail: grep's early exit fails virsh.)
  xml=$(virsh -c "$uri" dumpxml --inactive "$dom")
  grep -q "vpa:placed" <<<"$xml" ||
    fail "$dom was defined without its placement record"
done
echo "ok 2 killed defines: $n domains hold $n distinct VFs"

# The lock died with its holders: one more define (if a VF is left) or a
# clean refusal (if not) comes back well within the lock's timeout.
start=$(date +%s)
rc=0
domain_xml "$prefix-after" 3 0 > "$work/after.xml"
timeout 60 "$vpa" define -c "$uri" --inventory "$snapshot" "$work/after.xml" \
  > "$work/after.out" 2> "$work/after.err" || rc=$?
elapsed=$(( $(date +%s) - start ))
if [ "$n" -lt 16 ]; then
  [ "$rc" -eq 0 ] || fail "define after the kills exited $rc: $(cat "$work/after.err")"
else
  [ "$rc" -eq 1 ] || fail "define with every VF held exited $rc: $(cat "$work/after.err")"
fi
[ "$elapsed" -lt 30 ] || fail "define after the kills took ${elapsed}s: the lock outlived its holder"
echo "ok 3 the define lock does not outlive a killed holder (${elapsed}s)"
echo "1..3"
