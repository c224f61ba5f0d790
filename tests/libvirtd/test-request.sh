#!/usr/bin/env bash
# Real-daemon suite for `virt-pci-affinity request` (docs/virsh.md): a
# domain defined by plain virsh, and one that virt-install --print-xml
# wrote, are brought under policy with `request` alone: add-port writes
# the <vpa:port> into the persistent definition through
# virDomainSetMetadata (show and virsh dumpxml --inactive read it back),
# place/--place gives the new interface a VF and defines it, remove takes
# the request out again. The commands docs/virsh.md shows are the ones
# run here. Needs root and a running libvirtd (tests/libvirtd/start.sh);
# exits 77 (skip) otherwise; the virt-install step is skipped (ok, with
# a SKIP note) when virt-install (Debian: virtinst) is not installed.
set -euo pipefail

vpa=${1:?usage: test-request.sh VIRT-PCI-AFFINITY}
. "$(dirname "$0")/lib.sh" vpa-request

n=0
ok() { n=$((n + 1)); echo "ok $n $*"; }

placed_address() { # DOMAIN DEVICE: the <vpa:placed address> of DEVICE
  virsh -c "$uri" dumpxml --inactive "$1" | xmllint --xpath \
    "string(//*[local-name()='placed'][@device='$2']/@address)" -
}

# 1. A domain virsh defined, no requests: show prints nothing.
dom=$prefix-plain
cat > "$work/plain.xml" <<XML
<domain type='qemu'>
  <name>$dom</name>
  <memory unit='MiB'>64</memory>
  <os><type arch='x86_64' machine='pc'>hvm</type></os>
  <devices><emulator>/usr/bin/qemu-system-x86_64</emulator></devices>
</domain>
XML
virsh -c "$uri" define "$work/plain.xml" >/dev/null || fail "virsh define $dom failed"
shown=$("$vpa" request -c "$uri" "$dom" show) || fail "request show failed"
[ -z "$shown" ] || fail "request show of a domain without requests printed: $shown"
ok "request show: nothing before any request"

# 2. add-port: the request is in the persistent definition; the new
# interface waits for placing (and the line says so, and how).
out=$("$vpa" request -c "$uri" "$dom" add-port ua-net0 --policy preferred) ||
  fail "request add-port failed"
[ "$out" = "domain '$dom': requests written; its new interface is defined when it is placed, and until then the hook refuses its start: virt-pci-affinity request '$dom' place" ] ||
  fail "request add-port printed: $out"
virsh -c "$uri" dumpxml --inactive "$dom" > "$work/edited.xml"
grep -q '<vpa:port device="ua-net0" vnic-type="direct" policy="preferred"/>' "$work/edited.xml" ||
  fail "the persistent definition has no <vpa:port>: $(grep -A3 '<metadata' "$work/edited.xml")"
shown=$("$vpa" request -c "$uri" "$dom" show)
grep -q '<port device="ua-net0"' <<<"$shown" || fail "request show does not show the port: $shown"
ok "request add-port: <vpa:port> in the persistent definition, read back by show"

# 3. place: a VF for the new interface, recorded, defined.
name=$("$vpa" request -c "$uri" --inventory "$snapshot" "$dom" place) ||
  fail "request place failed"
[ "$name" = "$dom" ] || fail "request place printed '$name'"
addr=$(placed_address "$dom" ua-net0)
[ -n "$addr" ] || fail "no <vpa:placed device='ua-net0'> after request place"
virsh -c "$uri" dumpxml --inactive "$dom" > "$work/placed.xml"
grep -q "<alias name='ua-net0'/>" "$work/placed.xml" ||
  fail "the placed definition has no interface with the alias ua-net0"
ok "request place: ua-net0 placed on $addr and defined"

# 4. remove: the port and its record leave; the interface stays.
"$vpa" request -c "$uri" "$dom" remove ua-net0 >/dev/null || fail "request remove failed"
virsh -c "$uri" dumpxml --inactive "$dom" > "$work/removed.xml"
if grep -q '<vpa:port device="ua-net0"' "$work/removed.xml"; then
  fail "the port is still in the definition after remove"
fi
[ -z "$(placed_address "$dom" ua-net0)" ] || fail "the port's record is still there after remove"
ok "request remove: the port and its record are gone"

# 5. virt-install --print-xml, defined as virt-install would, then
# request add-port --place alone brings it under policy.
if ! command -v virt-install >/dev/null; then
  ok "# SKIP virt-install is not installed (Debian: virtinst)"
else
  vi=$prefix-vi
  virt-install --connect "$uri" --print-xml --name "$vi" --memory 64 --vcpus 1 \
    --os-variant generic --virt-type qemu --import --disk none --network none \
    --graphics none --noautoconsole > "$work/vi.xml" || fail "virt-install --print-xml failed"
  virsh -c "$uri" define "$work/vi.xml" >/dev/null || fail "virsh define of virt-install's XML failed"
  name=$("$vpa" request -c "$uri" --inventory "$snapshot" "$vi" add-port ua-net0 --place) ||
    fail "request add-port --place on virt-install's domain failed"
  [ "$name" = "$vi" ] || fail "request add-port --place printed '$name'"
  addr=$(placed_address "$vi" ua-net0)
  [ -n "$addr" ] || fail "virt-install's domain has no <vpa:placed> after request --place"
  ok "virt-install --print-xml + request add-port --place: ua-net0 on $addr"
fi
echo "1..$n"
