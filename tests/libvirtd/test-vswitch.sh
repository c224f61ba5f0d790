#!/usr/bin/env bash
# Real-daemon suite for NUMA-aware vSwitch ports (docs/vswitch.md): a
# guest with <vpa:numa placement="auto"> and a bridge port on a physnet
# the configuration serves from the host's last NUMA node is defined
# (the inventory is the connection) and started under QEMU (TCG); its
# numatune is that node and its interface is as written. On a host of
# two nodes or more, check refuses the guest bound to another node,
# naming the port, the physnet and both nodes.
# Needs root and a running libvirtd (tests/libvirtd/start.sh); exits 77
# (skip) otherwise, or when it cannot create its bridge.
set -euo pipefail

vpa=${1:?usage: test-vswitch.sh VIRT-PCI-AFFINITY}
. "$(dirname "$0")/lib.sh" vpa-vswitch

br=vpabr$$
br=${br:0:15}
ip link add "$br" type bridge 2>/dev/null || { echo "SKIP: cannot create bridge $br"; exit 77; }
trap 'ip link del "$br" >/dev/null 2>&1 || true; cleanup' EXIT
ip link set "$br" up

virsh -c "$uri" capabilities > "$work/caps.xml"
ncells=$(xmllint --xpath 'count(//topology/cells/cell)' "$work/caps.xml")
node=$(xmllint --xpath 'string((//topology/cells/cell)[last()]/@id)' "$work/caps.xml")
first=$(xmllint --xpath 'string((//topology/cells/cell)[1]/@id)' "$work/caps.xml")
[ -n "$node" ] || fail "no NUMA cell in the host's capabilities"
printf '[physnet physnet1]\nnuma-nodes=%s\n' "$node" > "$work/vswitch.conf"

# domain_xml NAME METADATA BINDING
domain_xml() {
  cat <<XML
<domain type='qemu'>
  <name>$1</name>
  <metadata>
    <vpa:affinity xmlns:vpa="http://virt-pci-affinity.org/xmlns/libvirt/domain/1.0">
      $2
      <vpa:port device="ua-br0" vnic-type="normal" physnet="physnet1"/>
    </vpa:affinity>
  </metadata>
  <memory unit='MiB'>64</memory>
  <vcpu placement='static'>1</vcpu>
  $3
  <os><type arch='x86_64' machine='pc'>hvm</type></os>
  <devices>
    <emulator>/usr/bin/qemu-system-x86_64</emulator>
    <interface type='bridge'>
      <source bridge='$br'/>
      <model type='virtio'/>
      <alias name='ua-br0'/>
    </interface>
  </devices>
</domain>
XML
}

# 1. define + start: the cell on the physnet's node, the interface untouched.
domain_xml "$prefix-a" '<vpa:numa placement="auto"/>' '' > "$work/a.xml"
name=$("$vpa" define -c "$uri" --config "$work/vswitch.conf" "$work/a.xml") ||
  fail "define of $prefix-a failed"
[ "$name" = "$prefix-a" ] || fail "define printed '$name'"
virsh -c "$uri" dumpxml "$prefix-a" > "$work/a.defined.xml"
got=$(xmllint --xpath "string(//*[local-name()='placed-cell']/@host-node)" "$work/a.defined.xml")
[ "$got" = "$node" ] || fail "recorded host node '$got', want the physnet's node $node"
got=$(xmllint --xpath "string(//interface/source/@bridge)" "$work/a.defined.xml")
[ "$got" = "$br" ] || fail "the interface's bridge is '$got', want $br"
virsh -c "$uri" start "$prefix-a" >/dev/null || fail "start of $prefix-a failed"
virsh -c "$uri" numatune "$prefix-a" > "$work/numatune.txt"
grep -Eq "numa_nodeset +: $node *$" "$work/numatune.txt" ||
  fail "numatune: $(cat "$work/numatune.txt")"
echo "ok 1 defined and started with its cell on node $node, the physnet's node"
virsh -c "$uri" destroy "$prefix-a" >/dev/null
virsh -c "$uri" undefine "$prefix-a" >/dev/null

# 2. a guest bound to another node breaks the hard rule: check refuses it.
if [ "$ncells" -lt 2 ]; then
  echo "ok 2 # SKIP one NUMA node: no other node to bind to"
  exit 0
fi
binding="<cpu><numa><cell id='0' cpus='0' memory='64' unit='MiB'/></numa></cpu>
  <numatune><memory mode='strict' nodeset='$first'/></numatune>"
domain_xml "$prefix-b" '' "$binding" > "$work/b.xml"
rc=0; "$vpa" check -c "$uri" --config "$work/vswitch.conf" "$work/b.xml" \
  >"$work/b.out" 2>"$work/b.err" || rc=$?
[ "$rc" -eq 1 ] || fail "check of a guest on node $first exited $rc: $(cat "$work/b.err")"
grep -q "port ua-br0: physnet physnet1 is served from host node $node (policy legacy), but the guest's cells are on host node $first" \
  "$work/b.out" || fail "unexpected report: $(cat "$work/b.out")"
echo "ok 2 check refuses the guest bound to node $first, naming the port, the physnet and the nodes"
