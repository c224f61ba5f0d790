#!/usr/bin/env bash
# `meson install` into the build's real prefix on this machine, as the
# README says, with the real libvirtd (tests/libvirtd/start.sh):
#   (a) the hook lands where libvirtd reads hooks, and libvirtd runs it:
#       a domain whose port's VF is not on this host is refused with our
#       line; a plain domain starts
#   (b) a half-removed install (the hook's program gone, its link left):
#       libvirtd skips the link; the plain domain starts and no hook
#       refuses the hostdev domain
#   (c) `ninja uninstall` removes every file meson installed; after a
#       restart a domain with a PCI hostdev and our metadata is no longer
#       refused by any hook: it reaches libvirt's own device preparation
#       (this machine has no such VF; libvirt's error, not ours)
# Needs root and the daemon start.sh started; exits 77 (skip) otherwise,
# and when anything of ours is installed already (it replaces nothing).
set -euo pipefail

build=$(realpath "${1:?usage: test-install.sh BUILDDIR QEMU_D CONFDIR}")
qemu_d=$2 confdir=$3
here=$(cd "$(dirname "$0")" && pwd)
state=${VPA_LIBVIRTD_STATE:-/run/vpa-test-libvirtd}
uri=qemu:///system
prefix=vpa-install-$$
export LIBVIRT_DEFAULT_URI=$uri

if [ "$(id -u)" -ne 0 ]; then
  echo "SKIP: the libvirtd suite needs root (run tools/run-tests as root)"
  exit 77
fi
if ! virsh version >/dev/null 2>&1 || [ ! -s "$state/libvirtd.pid" ]; then
  echo "SKIP: no libvirtd started by tests/libvirtd/start.sh answers on $uri"
  exit 77
fi
installed=$(meson introspect --installed "$build" | python3 -c 'import json,sys; print("\n".join(json.load(sys.stdin).values()))')
for f in $installed "$qemu_d/virt-pci-affinity"; do
  if [ -e "$f" ] || [ -L "$f" ]; then
    echo "SKIP: $f exists (installed already); not installing over it"
    exit 77
  fi
done
conf=$confdir/virt-pci-affinity.conf
had_conf=0
[ -e "$conf" ] && had_conf=1

work=$(mktemp -d)
# Keep the build's install log (`ninja uninstall` reads it) as it was.
log=$build/meson-logs/install-log.txt
[ -e "$log" ] && cp -p "$log" "$work/install-log.saved"
restart() {
  "$here/stop.sh" >/dev/null
  env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin HOME=/root \
    VPA_LIBVIRTD_STATE="$state" "$here/start.sh" >/dev/null
}
uninstall() {
  ninja -C "$build" uninstall > "$work/uninstall.log" 2>&1 || true
  [ "$had_conf" = 1 ] || rm -f "$conf"
  rmdir "$confdir" 2>/dev/null || true
}
cleanup() {
  for dom in $(virsh list --all --name 2>/dev/null | grep "^$prefix-" || true); do
    virsh destroy "$dom" >/dev/null 2>&1 || true
    virsh undefine "$dom" >/dev/null 2>&1 || true
  done
  uninstall
  restart || echo "test-install.sh: could not restart libvirtd" >&2
  if [ -e "$work/install-log.saved" ]; then mv -f "$work/install-log.saved" "$log"; else rm -f "$log"; fi
  rm -rf "$work"
}
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

domain() {
  cat <<DOM
<domain type='qemu'>
  <name>$1</name>
  <metadata>$2</metadata>
  <memory unit='MiB'>64</memory>
  <vcpu>1</vcpu>
  <os><type arch='x86_64' machine='pc'>hvm</type></os>
  <devices>
    <emulator>/usr/bin/qemu-system-x86_64</emulator>
    $3
  </devices>
</domain>
DOM
}
ns=http://virt-pci-affinity.org/xmlns/libvirt/domain/1.0
port_md="<vpa:affinity xmlns:vpa='$ns'><vpa:port device='ua-data0' physnet='physnet1' policy='required'/></vpa:affinity>"
vf="<interface type='hostdev' managed='yes'><mac address='52:54:00:00:00:01'/><source><address type='pci' domain='0x0000' bus='0xfe' slot='0x10' function='0x0'/></source><alias name='ua-data0'/></interface>"

meson install -C "$build" --no-rebuild --quiet >/dev/null
[ -x "$qemu_d/virt-pci-affinity" ] || fail "meson install did not put the hook in $qemu_d"
restart

# (a)
domain "$prefix-plain" "" "" > "$work/plain.xml"
virsh define "$work/plain.xml" >/dev/null
virsh start "$prefix-plain" >/dev/null || fail "(a) a plain domain did not start with the installed hook"
virsh destroy "$prefix-plain" >/dev/null
domain "$prefix-vf" "$port_md" "$vf" > "$work/vf.xml"
virsh define "$work/vf.xml" >/dev/null
if virsh start "$prefix-vf" > "$work/vf.out" 2>&1; then
  fail "(a) a domain whose VF is not on this host started"
fi
grep -q "Hook script execution failed" "$work/vf.out" || fail "(a) not a hook failure: $(cat "$work/vf.out")"
grep -q "virt-pci-affinity: domain '$prefix-vf': ua-data0: device 0000:fe:10.0 is not on this host" "$work/vf.out" ||
  fail "(a) our line is missing: $(cat "$work/vf.out")"
echo "ok (a) the installed hook runs in libvirtd: a plain domain starts; $(grep -o 'virt-pci-affinity: domain.*' "$work/vf.out" | head -1)"

# (b)
prog=$(realpath "$qemu_d/virt-pci-affinity")
rm -f "$prog"
restart
virsh start "$prefix-plain" >/dev/null || fail "(b) a plain domain did not start with a dangling hook link"
virsh destroy "$prefix-plain" >/dev/null
if virsh start "$prefix-vf" > "$work/vf1.out" 2>&1; then
  fail "(b) a domain with a VF this machine lacks started"
fi
if grep -q "Hook script\|virt-pci-affinity" "$work/vf1.out"; then
  fail "(b) a dangling hook link refuses: $(cat "$work/vf1.out")"
fi
echo "ok (b) the hook's program removed, its link left: libvirtd skips it; the plain domain starts, the hostdev domain reaches libvirt"

# (c)
uninstall
for f in $installed "$qemu_d/virt-pci-affinity"; do
  if [ -e "$f" ] || [ -L "$f" ]; then
    fail "(c) ninja uninstall left $f"
  fi
done
restart
if virsh start "$prefix-vf" > "$work/vf2.out" 2>&1; then
  fail "(c) a domain with a VF this machine lacks started"
fi
if grep -q "Hook script\|virt-pci-affinity" "$work/vf2.out"; then
  fail "(c) a hook still refuses after uninstall: $(cat "$work/vf2.out")"
fi
echo "ok (c) after ninja uninstall no hook refuses the hostdev domain; libvirt itself says: $(grep error: "$work/vf2.out" | tail -1)"
