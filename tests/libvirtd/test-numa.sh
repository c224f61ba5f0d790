#!/usr/bin/env bash
# Real-daemon suite for whole-guest NUMA placement: a guest with
# <vpa:numa placement="auto" cpu-policy="dedicated"> is defined with the
# host's own topology (the inventory is the connection) and started under
# QEMU (TCG); virsh vcpupin, emulatorpin and numatune show exactly the
# binding recorded in <vpa:placed-cell>. Then two concurrent defines of
# dedicated guests on a host with room for one: one is defined, the other
# refused with nothing defined. Then attach to placed guests (devices
# from the snapshot): a port stays inside the policy relative to the
# nodes the guest is bound to, and the binding is never changed.
# Needs root and a running libvirtd (tests/libvirtd/start.sh); exits 77
# (skip) otherwise.
set -euo pipefail

vpa=${1:?usage: test-numa.sh VIRT-PCI-AFFINITY}
. "$(dirname "$0")/lib.sh" vpa-numa

ncpus=$(nproc)
[ "$ncpus" -ge 2 ] || { echo "SKIP: needs 2 CPUs"; exit 77; }
last=$((ncpus - 1))
# The last CPU dedicated, the others shared.
printf '[host]\ncpu-dedicated-set=%d\n' "$last" > "$work/numa.conf"

domain_xml() {
  cat <<XML
<domain type='qemu'>
  <name>$1</name>
  <metadata>
    <vpa:affinity xmlns:vpa="http://virt-pci-affinity.org/xmlns/libvirt/domain/1.0">
      <vpa:numa placement="auto" cpu-policy="dedicated"/>
    </vpa:affinity>
  </metadata>
  <memory unit='MiB'>64</memory>
  <vcpu placement='static'>1</vcpu>
  <os><type arch='x86_64' machine='pc'>hvm</type></os>
  <devices>
    <emulator>/usr/bin/qemu-system-x86_64</emulator>
  </devices>
</domain>
XML
}

record() {
  virsh -c "$uri" dumpxml "$1" | xmllint --xpath \
    "string(//*[local-name()='placed-cell']/@$2)" -
}

# 1. define + start: the daemon applies what we recorded.
domain_xml "$prefix-a" > "$work/a.xml"
name=$("$vpa" define -c "$uri" --config "$work/numa.conf" "$work/a.xml") ||
  fail "define of $prefix-a failed"
[ "$name" = "$prefix-a" ] || fail "define printed '$name'"
cpus=$(record "$prefix-a" cpus)
node=$(record "$prefix-a" host-node)
[ "$cpus" = "$last" ] || fail "recorded CPUs '$cpus', want the dedicated CPU $last"
virsh -c "$uri" start "$prefix-a" >/dev/null || fail "start of $prefix-a failed"
virsh -c "$uri" vcpupin "$prefix-a" > "$work/vcpupin.txt"
grep -Eq "^ *0 +$last *$" "$work/vcpupin.txt" || fail "vcpupin: $(cat "$work/vcpupin.txt")"
virsh -c "$uri" emulatorpin "$prefix-a" > "$work/emulatorpin.txt"
grep -Eq "^ *\\*: +$last *$" "$work/emulatorpin.txt" || fail "emulatorpin: $(cat "$work/emulatorpin.txt")"
virsh -c "$uri" numatune "$prefix-a" > "$work/numatune.txt"
grep -Eq "numa_mode +: strict" "$work/numatune.txt" || fail "numatune: $(cat "$work/numatune.txt")"
grep -Eq "numa_nodeset +: $node *$" "$work/numatune.txt" || fail "numatune: $(cat "$work/numatune.txt")"
echo "ok 1 defined and started: vcpupin, emulatorpin and numatune show CPU $last on node $node"

# 2. the running guest holds the CPU: another define is refused.
domain_xml "$prefix-b" > "$work/b.xml"
rc=0; "$vpa" define -c "$uri" --config "$work/numa.conf" "$work/b.xml" \
  >"$work/b.out" 2>"$work/b.err" || rc=$?
[ "$rc" -eq 1 ] || fail "define with the CPU taken exited $rc: $(cat "$work/b.err")"
[ ! -s "$work/b.out" ] || fail "refused define printed: $(cat "$work/b.out")"
grep -q "free dedicated CPUs" "$work/b.err" || fail "unexpected message: $(cat "$work/b.err")"
! virsh -c "$uri" dominfo "$prefix-b" >/dev/null 2>&1 || fail "refused define left a domain"
echo "ok 2 a second dedicated guest is refused while the first holds the CPU"
virsh -c "$uri" destroy "$prefix-a" >/dev/null
virsh -c "$uri" undefine "$prefix-a" >/dev/null

# 3. two concurrent defines with room for one.
for x in c d; do domain_xml "$prefix-$x" > "$work/$x.xml"; done
"$vpa" define -c "$uri" --config "$work/numa.conf" "$work/c.xml" >"$work/c.out" 2>"$work/c.err" &
pc=$!
"$vpa" define -c "$uri" --config "$work/numa.conf" "$work/d.xml" >"$work/d.out" 2>"$work/d.err" &
pd=$!
rc_c=0; wait $pc || rc_c=$?
rc_d=0; wait $pd || rc_d=$?
[ $((rc_c + rc_d)) -eq 1 ] || fail "concurrent defines exited $rc_c and $rc_d (want one 0, one 1)"
n=$(virsh -c "$uri" list --all --name | grep -c "^$prefix-[cd]$" || true)
[ "$n" -eq 1 ] || fail "$n domains defined, want 1"
echo "ok 3 two concurrent dedicated defines with room for one: one defined, one refused"

# 4. attach to a bound guest. The snapshot's VFs are all on node 1; a
# guest whose required port took one is bound there, a guest without
# devices to node 2 (no device at all: PCI-poor nodes first).
bound_xml() {
  cat <<XML
<domain type='qemu'>
  <name>$1</name>
  <metadata>
    <vpa:affinity xmlns:vpa="http://virt-pci-affinity.org/xmlns/libvirt/domain/1.0">
      <vpa:numa placement="auto" cpu-policy="shared"/>
      $2
    </vpa:affinity>
  </metadata>
  <memory unit='MiB'>64</memory>
  <vcpu placement='static'>1</vcpu>
  <os><type arch='x86_64' machine='pc'>hvm</type></os>
  <devices>
    <emulator>/usr/bin/qemu-system-x86_64</emulator>
    $3
  </devices>
</domain>
XML
}
binding() {
  virsh -c "$uri" dumpxml --inactive "$1" > "$work/binding.xml"
  xmllint --xpath "//*[local-name()='placed-cell']|//numatune|//cputune" "$work/binding.xml"
}
bound_xml "$prefix-e" '<vpa:port device="ua-net0" policy="required"/>' \
  "<interface type='hostdev' managed='yes'><alias name='ua-net0'/></interface>" > "$work/e.xml"
"$vpa" define -c "$uri" --inventory "$snapshot" "$work/e.xml" >/dev/null 2>"$work/e.err" ||
  fail "define of $prefix-e failed: $(cat "$work/e.err")"
[ "$(record "$prefix-e" host-node)" = 1 ] || fail "$prefix-e bound to node $(record "$prefix-e" host-node), want 1"
before=$(binding "$prefix-e")
got=$("$vpa" attach -c "$uri" --inventory "$snapshot" "$prefix-e" --port ua-net1 \
  --policy required --config 2>"$work/attach-e.err") ||
  fail "attach to $prefix-e failed: $(cat "$work/attach-e.err")"
case "$got" in 0000:81:0[23].*) ;; *) fail "required attach on node 1 picked $got" ;; esac
[ "$(binding "$prefix-e")" = "$before" ] || fail "attach changed the binding of $prefix-e"
grep -q "<alias name='ua-net1'/>" "$work/binding.xml" || fail "ua-net1 is not in the definition"
echo "ok 4 attach to a guest bound to node 1: required takes $got there, the binding unchanged"

bound_xml "$prefix-f" "" "" > "$work/f.xml"
"$vpa" define -c "$uri" --inventory "$snapshot" "$work/f.xml" >/dev/null 2>"$work/f.err" ||
  fail "define of $prefix-f failed: $(cat "$work/f.err")"
node=$(record "$prefix-f" host-node)
[ "$node" = 2 ] || fail "$prefix-f bound to node $node, want 2"
before=$(binding "$prefix-f")
for policy in required socket legacy; do
  rc=0; "$vpa" attach -c "$uri" --inventory "$snapshot" "$prefix-f" --port ua-net1 \
    --policy "$policy" --config >"$work/attach-f.out" 2>"$work/attach-f.err" || rc=$?
  [ "$rc" -eq 1 ] || fail "$policy attach to node 2 exited $rc: $(cat "$work/attach-f.err")"
  [ ! -s "$work/attach-f.out" ] || fail "refused attach printed: $(cat "$work/attach-f.out")"
  [ "$(wc -l < "$work/attach-f.err")" -eq 1 ] || fail "refusal is not one line: $(cat "$work/attach-f.err")"
  grep -q "attach: domain '$prefix-f': port 'ua-net1' (policy $policy from port): .*(2)" \
    "$work/attach-f.err" || fail "refusal does not name domain, port, policy, nodes: $(cat "$work/attach-f.err")"
done
[ "$(binding "$prefix-f")" = "$before" ] || fail "a refused attach changed $prefix-f"
! grep -q "ua-net1" "$work/binding.xml" || fail "a refused attach left ua-net1 in $prefix-f"
got=$("$vpa" attach -c "$uri" --inventory "$snapshot" "$prefix-f" --port ua-net1 \
  --policy preferred --config 2>"$work/attach-f.err") ||
  fail "preferred attach to $prefix-f failed: $(cat "$work/attach-f.err")"
[ "$(binding "$prefix-f")" = "$before" ] || fail "attach changed the binding of $prefix-f"
echo "ok 5 attach to a guest bound to node 2 (no VF): required, socket, legacy refused in one line; preferred takes $got"
echo "1..5"
