#!/usr/bin/env bash
# Real-daemon suite for the CLI: `virt-pci-affinity define` against
# qemu:///system with the devices from a snapshot (--inventory): the
# defined XML carries the placed VF, a redefinition keeps it, and 16
# concurrent defines competing for 8 free VFs give exactly 8 domains with
# distinct VFs while the other 8 exit 1 with nothing defined.
# Needs root and a running libvirtd (tests/libvirtd/start.sh); exits 77
# (skip) otherwise.
set -euo pipefail

vpa=${1:?usage: test-cli-define.sh VIRT-PCI-AFFINITY}
. "$(dirname "$0")/lib.sh" vpa-cli

domain_xml() {
  cat <<XML
<domain type='qemu'>
  <name>$1</name>
  <uuid>$(cat /proc/sys/kernel/random/uuid)</uuid>
  <metadata>
    <vpa:affinity xmlns:vpa="http://virt-pci-affinity.org/xmlns/libvirt/domain/1.0">
      <vpa:port device="ua-net0" vnic-type="direct"/>
    </vpa:affinity>
  </metadata>
  <memory unit='MiB'>64</memory>
  <os><type arch='x86_64' machine='pc'>hvm</type></os>
  <devices>
    <emulator>/usr/bin/qemu-system-x86_64</emulator>
    <!-- filled by virt-pci-affinity define -->
    <interface type='hostdev' managed='yes'>
      <mac address='52:54:00:aa:00:$(printf %02x "$2")'/>
      <alias name='ua-net0'/>
    </interface>
  </devices>
</domain>
XML
}

placed_address() {
  virsh -c "$uri" dumpxml "$1" | xmllint --xpath \
    "string(//*[local-name()='placed']/@address)" -
}

# 1. One define: the daemon stores the placed VF and our record of it.
domain_xml "$prefix-first" 0 > "$work/first.xml"
name=$("$vpa" define -c "$uri" --inventory "$snapshot" "$work/first.xml") ||
  fail "define of $prefix-first failed"
[ "$name" = "$prefix-first" ] || fail "define printed '$name'"
first=$(placed_address "$prefix-first")
[ -n "$first" ] || fail "no <vpa:placed> in the defined XML"
# (No "virsh | grep -q" under pipefail: grep's early exit would fail virsh.)
virsh -c "$uri" dumpxml "$prefix-first" > "$work/first.defined.xml"
grep -q "<alias name='ua-net0'/>" "$work/first.defined.xml" ||
  fail "the defined XML lost the interface's user alias"
bus=$(virsh -c "$uri" dumpxml "$prefix-first" | xmllint --xpath \
  "string(//devices/interface[@type='hostdev']/source/address/@bus)" -)
[ "$(printf '%02x' "$bus")" = "${first:5:2}" ] ||
  fail "interface source bus $bus does not match the placed address $first"
echo "ok 1 define places and stores $first"

# 2. Redefining the same domain keeps its device (it does not compete
#    with itself).
"$vpa" define -c "$uri" --inventory "$snapshot" "$work/first.xml" >/dev/null ||
  fail "redefinition failed"
[ "$(placed_address "$prefix-first")" = "$first" ] || fail "redefinition moved the VF"
echo "ok 2 redefinition keeps $first"
virsh -c "$uri" undefine "$prefix-first" >/dev/null

# 3. 16 concurrent defines for the snapshot's 8 VFs.
pids=()
for i in $(seq 1 16); do
  domain_xml "$prefix-$i" "$i" > "$work/$i.xml"
  "$vpa" define -c "$uri" --inventory "$snapshot" "$work/$i.xml" \
    >"$work/$i.out" 2>"$work/$i.err" &
  pids+=($!)
done
ok=0; refused=0
for i in $(seq 1 16); do
  rc=0; wait "${pids[$((i - 1))]}" || rc=$?
  case $rc in
    0) ok=$((ok + 1)) ;;
    1) refused=$((refused + 1))
       [ ! -s "$work/$i.out" ] || fail "define $i failed but printed: $(cat "$work/$i.out")"
       grep -q "port 'ua-net0'" "$work/$i.err" ||
         fail "define $i: unexpected message: $(cat "$work/$i.err")"
       if virsh -c "$uri" dominfo "$prefix-$i" >/dev/null 2>&1; then
         fail "define $i failed but left a domain behind"
       fi ;;
    *) fail "define $i exited $rc: $(cat "$work/$i.err")" ;;
  esac
done
[ "$ok" -eq 8 ] && [ "$refused" -eq 8 ] || fail "$ok defines succeeded, $refused refused (want 8 and 8)"
addrs=$(for dom in $(virsh -c "$uri" list --all --name | grep "^$prefix-"); do
  placed_address "$dom"; echo; done | sed '/^$/d' | sort)
[ "$(echo "$addrs" | wc -l)" -eq 8 ] || fail "expected 8 placed domains"
[ "$(echo "$addrs" | uniq | wc -l)" -eq 8 ] || fail "a VF was handed out twice: $addrs"
echo "ok 3 16 concurrent defines: 8 defined with distinct VFs, 8 refused"

# Pools are derived from the domains: the defines show at once.
"$vpa" pools -c "$uri" --inventory "$snapshot" --format json > "$work/pools.json"
vf_used=$(python3 -c 'import json,sys; print(sum(p["used"] for p in json.load(open(sys.argv[1]))["pools"] if p["dev_type"]=="type-VF"))' "$work/pools.json")
vf_free=$(python3 -c 'import json,sys; print(sum(p["free"] for p in json.load(open(sys.argv[1]))["pools"] if p["dev_type"]=="type-VF"))' "$work/pools.json")
[ "$vf_used" -eq 8 ] && [ "$vf_free" -eq 0 ] || fail "pools show $vf_used VFs used, $vf_free free (want 8 and 0)"
echo "ok 4 pools show the 8 defined VFs as used"

# 4. attach (persistent definition): no VF left, then one freed.
doms=($(virsh -c "$uri" list --all --name | grep "^$prefix-" | sort))
rc=0; "$vpa" attach -c "$uri" --inventory "$snapshot" "${doms[0]}" --port ua-net1 --config \
  >"$work/attach.out" 2>"$work/attach.err" || rc=$?
[ "$rc" -eq 1 ] || fail "attach with every VF held exited $rc: $(cat "$work/attach.err")"
[ ! -s "$work/attach.out" ] || fail "failed attach printed: $(cat "$work/attach.out")"
freed=$(placed_address "${doms[1]}")
virsh -c "$uri" undefine "${doms[1]}" >/dev/null
got=$("$vpa" attach -c "$uri" --inventory "$snapshot" "${doms[0]}" --port ua-net1 --config) ||
  fail "attach after freeing $freed failed"
[ "$got" = "$freed" ] || fail "attach picked $got, the only free VF is $freed"
virsh -c "$uri" dumpxml --inactive "${doms[0]}" > "$work/attached.xml"
grep -q "<alias name='ua-net1'/>" "$work/attached.xml" ||
  fail "the attached interface is not in the persistent definition"
echo "ok 5 attach --config: refused while every VF is held, then takes the freed $freed"
echo "1..5"
