#!/usr/bin/env bash
# Real-daemon suite for guest-visible device NUMA: `virt-pci-affinity
# define` of data/guest-numa/q35-two-cells.xml (devices from the
# dual-socket snapshot) on qemu:///system; the daemon keeps our expander
# buses, root ports and device addresses; placing its dumpxml again
# changes nothing; and `virsh domxml-to-native qemu-argv` gives QEMU a
# pxb-pcie with numa_node=C per guest cell and each device on its root
# port. libvirt 9.0 cannot format a PCI hostdev whose host device is not
# bound to vfio-pci, so for the argv (only) each hostdev is stood in for
# by an emulated NIC at the same guest address; this host's single NUMA
# node is why <numatune> is left out there too. Then every golden of
# data/guest-distances is defined and keeps its <distances>.
# Needs root and a running libvirtd (tests/libvirtd/start.sh); exits 77
# (skip) otherwise.
set -euo pipefail

vpa=${1:?usage: test-guest-numa.sh VIRT-PCI-AFFINITY}
. "$(dirname "$0")/lib.sh" vpa-gn

host=$VPA_TEST_DATA/hosts/dual-socket.xml
conf=$VPA_TEST_DATA/hosts/dual-socket.conf
name=$prefix-q35
sed "s|<name>gn-q35</name>|<name>$name</name>|; s|<uuid>.*</uuid>|<uuid>$(cat /proc/sys/kernel/random/uuid)</uuid>|" \
  "$VPA_TEST_DATA/guest-numa/q35-two-cells.xml" > "$work/in.xml"

# The argv stand-in of a domain XML (see above): NATIVE-XML from XML.
stand_in() {
  python3 - "$1" "$2" <<'PY'
import re, sys
s = open(sys.argv[1]).read()
s = re.sub(r"\s*<numatune>.*?</numatune>", "", s, flags=re.S)
def standin(m):
    el = m.group(0)
    alias = re.search(r"<alias name='([^']+)'/>", el).group(1)
    own = re.findall(r"<address type='pci'[^>]*/>", el.split("</source>")[-1])
    addr = own[-1] if own else ""  # none: libvirt places it
    return ("<interface type='user'><model type='e1000e'/><alias name='%s'/>%s</interface>"
            % (alias, addr))
s = re.sub(r"<hostdev .*?</hostdev>", standin, s, flags=re.S)
s = re.sub(r"<interface type='hostdev'.*?</interface>", standin, s, flags=re.S)
open(sys.argv[2], "w").write(s)
PY
}

# 1. define: the daemon accepts and keeps the layout.
out=$("$vpa" define -c "$uri" --inventory "$host" --config "$conf" "$work/in.xml") ||
  fail "define of $name failed"
[ "$out" = "$name" ] || fail "define printed '$out'"
virsh -c "$uri" dumpxml --inactive "$name" > "$work/defined.xml"
x() { xmllint --xpath "$1" "$work/defined.xml"; }
[ "$(x "string(//controller[alias/@name='ua-vpa-pxb-1']/model/@name)")" = pxb-pcie ] ||
  fail "libvirt did not take ua-vpa-pxb-1 as a pxb-pcie"
[ "$(x "string(//controller[alias/@name='ua-vpa-pxb-1']/target/node)")" = 1 ] ||
  fail "ua-vpa-pxb-1 lost its <node>1</node>"
rp=$(x "string(//controller[alias/@name='ua-vpa-rp-ua-vpa-GPU-0']/@index)")
[ -n "$rp" ] || fail "no root port ua-vpa-rp-ua-vpa-GPU-0 in the defined XML"
gpu_bus=$(x "string(//hostdev[alias/@name='ua-vpa-GPU-0']/address/@bus)")
[ "$((gpu_bus))" -eq "$rp" ] || fail "the GPU is on bus $gpu_bus, not on its root port (index $rp)"
# libvirt's own devices (USB controller, balloon) take free root ports at
# define time; define settles so that each cell keeps a free spare.
python3 - "$work/defined.xml" <<'PY' || fail "a cell has no free spare root port after define"
import sys, xml.etree.ElementTree as ET
devs = ET.parse(sys.argv[1]).getroot().find("devices")
used = {int(a.get("bus"), 0) for a in devs.findall("*/address[@type='pci']")}
for cell in (0, 1):
    free = [c for c in devs.findall("controller")
            if c.find("alias") is not None
            and c.find("alias").get("name", "").startswith("ua-vpa-rp-spare-%d-" % cell)
            and int(c.get("index")) not in used]
    if not free:
        sys.exit(1)
PY
echo "ok 1 define keeps the expander of cell 1, the GPU on its root port (index $rp) and a free spare per cell"

# 2. Placing libvirt's own formatting of it again changes nothing.
"$vpa" place --inventory "$host" --config "$conf" "$work/defined.xml" > "$work/again.xml" ||
  fail "place of the defined XML failed"
cmp -s "$work/defined.xml" "$work/again.xml" ||
  fail "place changed the defined XML: $(diff "$work/defined.xml" "$work/again.xml" | head -20)"
echo "ok 2 placing the dumpxml again changes nothing"

# 3. attach (persistent definition) goes into a spare root port of the
# device's cell; with both cells' one spare used, the next is refused.
hot=0; rc=0
for i in 1 2 3; do
  VPA_CONFIG=$conf "$vpa" attach -c "$uri" --inventory "$host" "$name" --port "ua-hot$i" \
    --physnet physnet1 --config > "$work/attach$i.out" 2> "$work/attach$i.err" || { rc=$?; break; }
  virsh -c "$uri" dumpxml --inactive "$name" > "$work/attached.xml"
  bus=$(xmllint --xpath "string(//interface[alias/@name='ua-hot$i']/address/@bus)" "$work/attached.xml")
  [ -n "$bus" ] || fail "ua-hot$i has no guest address"
  port=$(xmllint --xpath "string(//controller[@index=$((bus))]/alias/@name)" "$work/attached.xml")
  case $port in ua-vpa-rp-spare-*) ;; *) fail "ua-hot$i went to bus $bus ($port), not a spare root port" ;; esac
  hot=$i
done
[ "$rc" -eq 1 ] || fail "attach with no spare left exited $rc: $(cat "$work/attach$((hot + 1)).err")"
[ "$hot" -ge 1 ] || fail "the first attach failed: $(cat "$work/attach1.err")"
grep -q "raise spare-ports" "$work/attach$((hot + 1)).err" ||
  fail "the refused attach does not say to raise spare-ports: $(cat "$work/attach$((hot + 1)).err")"
[ ! -s "$work/attach$((hot + 1)).out" ] || fail "the refused attach printed something"
"$vpa" place --inventory "$host" --config "$conf" "$work/attached.xml" > "$work/replaced.xml"
bus2=$(xmllint --xpath "string(//interface[alias/@name='ua-hot1']/address/@bus)" "$work/replaced.xml")
[ "$bus2" = "$(xmllint --xpath "string(//interface[alias/@name='ua-hot1']/address/@bus)" "$work/attached.xml")" ] ||
  fail "placing again moved the hot-plugged ua-hot1"
echo "ok 3 attach takes $hot spare root port(s), then refuses saying to raise spare-ports"

# 4. The QEMU command line.
stand_in "$work/defined.xml" "$work/native.xml"
virsh -c "$uri" domxml-to-native qemu-argv "$work/native.xml" > "$work/argv" 2> "$work/argv.err" ||
  fail "domxml-to-native failed: $(cat "$work/argv.err")"
for c in 0 1; do
  grep -q "\"driver\":\"pxb-pcie\",\"bus_nr\":[0-9]*,\"id\":\"ua-vpa-pxb-$c\",\"numa_node\":$c," "$work/argv" ||
    fail "no pxb-pcie ua-vpa-pxb-$c with numa_node=$c in: $(tr ' ' '\n' < "$work/argv" | grep pxb)"
done
grep -q "\"driver\":\"pcie-root-port\",[^}]*\"id\":\"ua-vpa-rp-ua-vpa-GPU-0\",\"bus\":\"ua-vpa-pxb-1\"" "$work/argv" ||
  fail "the GPU's root port is not on ua-vpa-pxb-1"
grep -q "\"driver\":\"e1000e\",[^}]*\"bus\":\"ua-vpa-rp-ua-vpa-GPU-0\",\"addr\":\"0x0\"" "$work/argv" ||
  fail "the GPU's stand-in is not on its root port: $(tr ' ' '\n' < "$work/argv" | grep GPU)"
echo "ok 4 domxml-to-native: pxb-pcie numa_node=0 and 1, the GPU on its root port on cell 1's expander"

# 5. Every golden layout converts, each expander with its cell's node.
t=5
for out in "$VPA_TEST_DATA"/guest-numa/*.out.xml; do
  stand_in "$out" "$work/case.xml"
  virsh -c "$uri" domxml-to-native qemu-argv "$work/case.xml" > "$work/case.argv" 2> "$work/case.err" ||
    fail "domxml-to-native of $(basename "$out") failed: $(cat "$work/case.err")"
  for c in $(xmllint --xpath "//controller[starts-with(alias/@name,'ua-vpa-pxb-')]/target/node/text()" "$out" 2>/dev/null); do
    grep -q "\"driver\":\"pxb\(-pcie\)\?\",\"bus_nr\":[0-9]*,\"id\":\"ua-vpa-pxb-$c\",\"numa_node\":$c," "$work/case.argv" ||
      fail "$(basename "$out"): no expander ua-vpa-pxb-$c with numa_node=$c: $(tr ' ' '\n' < "$work/case.argv" | grep pxb)"
  done
  # <pcihole64> (KiB) becomes the host bridge's pci-hole64-size=NK.
  hole=$(xmllint --xpath "string(//controller[@index='0']/pcihole64[not(@unit) or @unit='KiB'])" "$out" 2>/dev/null || true)
  if [ -n "$hole" ]; then
    grep -q "pci-hole64-size=${hole}K" "$work/case.argv" ||
      fail "$(basename "$out"): no pci-hole64-size=${hole}K in: $(tr ' ' '\n' < "$work/case.argv" | grep -i hole)"
  fi
  echo "ok $t domxml-to-native accepts $(basename "$out")"
  t=$((t + 1))
done

# 6. The guest distances (data/guest-distances): the daemon defines each
# golden and keeps every cell's sibling values.
for out in "$VPA_TEST_DATA"/guest-distances/*.out.xml; do
  dname=$prefix-$(basename "$out" .out.xml)
  sed "s|<name>[^<]*</name>|<name>$dname</name>|" "$out" > "$work/dist.xml"
  virsh -c "$uri" define "$work/dist.xml" > /dev/null 2> "$work/dist.err" ||
    fail "define of $(basename "$out") failed: $(cat "$work/dist.err")"
  virsh -c "$uri" dumpxml --inactive "$dname" > "$work/dist-defined.xml"
  # libvirt fills the other cells of a partial matrix (the kept one)
  # symmetrically: there, cell 0's row is what must stay.
  cells=cell; case $dname in *-keep) cells="cell[@id='0']" ;; esac
  sib() { xmllint --xpath "//cpu/numa/$cells/distances/sibling/@value" "$1" 2>/dev/null | tr -s ' \n' ' '; }
  [ "$(sib "$work/dist.xml")" = "$(sib "$work/dist-defined.xml")" ] ||
    fail "$(basename "$out"): the defined distances are '$(sib "$work/dist-defined.xml")', not '$(sib "$work/dist.xml")'"
  virsh -c "$uri" undefine "$dname" > /dev/null
  echo "ok $t the daemon defines $(basename "$out") and keeps its distances"
  t=$((t + 1))
done
echo "1..$((t - 1))"
