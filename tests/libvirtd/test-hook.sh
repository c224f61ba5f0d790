#!/usr/bin/env bash
# Real-daemon suite for the qemu hook: libvirtd 9 with QEMU/TCG runs the
# built hook from /etc/libvirt/hooks/qemu.d for real domains.
#   (a) a domain without vpa metadata starts; the hook changes nothing
#   (b) a VF that breaks its port's `required` policy: `virsh start`
#       fails with our one line in libvirt's error
#   (c) a compliant domain passes the hook and fails later, in libvirt's
#       own device preparation (the VF does not exist), with libvirt's
#       message, not ours
#   (d) `virsh save` / `virsh restore` of a running domain with vpa
#       metadata but no hostdev passes through unchanged
# libvirtd reads hooks at start-up only, so the suite restarts the daemon
# started by tests/libvirtd/start.sh with the hook installed, and restarts
# it without the hook afterwards. Needs root and that daemon; exits 77
# (skip) otherwise.
set -euo pipefail

hook=$(realpath "${1:?usage: test-hook.sh HOOK}")
data=${VPA_TEST_DATA:?}
here=$(cd "$(dirname "$0")" && pwd)
state=${VPA_LIBVIRTD_STATE:-/run/vpa-test-libvirtd}
uri=qemu:///system
prefix=vpa-hook-$$
export LIBVIRT_DEFAULT_URI=$uri

if [ "$(id -u)" -ne 0 ]; then
  echo "SKIP: the libvirtd suite needs root (run tools/run-tests as root)"
  exit 77
fi
if ! virsh version >/dev/null 2>&1; then
  echo "SKIP: no libvirtd answers on $uri (start it with tests/libvirtd/start.sh)"
  exit 77
fi
if [ ! -s "$state/libvirtd.pid" ]; then
  echo "SKIP: the libvirtd on $uri was not started by tests/libvirtd/start.sh;" \
       "the hook needs a daemon restart, which this suite only does to its own daemon"
  exit 77
fi
if [ -e /etc/libvirt/hooks/qemu.d/virt-pci-affinity ]; then
  echo "SKIP: /etc/libvirt/hooks/qemu.d/virt-pci-affinity exists; not replacing it"
  exit 77
fi

work=$(mktemp -d)
# The daemon starts with the environment of a service, not of the tests.
restart() {
  "$here/stop.sh" >/dev/null
  env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin HOME=/root \
    VPA_LIBVIRTD_STATE="$state" ${1:+VPA_LIBVIRTD_HOOK=$1} "$here/start.sh" >/dev/null
}
cleanup() {
  for dom in $(virsh list --all --name 2>/dev/null | grep "^$prefix-" || true); do
    virsh destroy "$dom" >/dev/null 2>&1 || true
    virsh undefine "$dom" >/dev/null 2>&1 || true
  done
  # The daemon as it was: running, without our hook (stop.sh removes it).
  restart "" || echo "test-hook.sh: could not restart libvirtd without the hook" >&2
  rm -rf "$work"
}
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

# The hook runs with a clean environment: a wrapper passes the test
# configuration (which the hook in its build tree honours), and logs each
# call with its exit status.
sed -e "s|@DATA@|$data|g" -e "s|^state-dirs=.*|state-dirs=/run/libvirt/qemu;/etc/libvirt/qemu|" \
  "$data/hook/configs/two-node.conf" > "$work/vpa.conf"
cat > "$work/hook" <<WRAPPER
#!/bin/sh
VPA_CONFIG=$work/vpa.conf $hook "\$@"
rc=\$?
echo "\$* rc=\$rc" >> $work/calls
exit \$rc
WRAPPER
chmod 0755 "$work/hook"
: > "$work/calls"
restart "$work/hook"

# A TCG guest that needs no disk. $1 name, $2 metadata, $3 devices,
# $4 extra elements after <vcpu>.
domain() {
  cat <<DOM
<domain type='qemu'>
  <name>$1</name>
  <metadata>$2</metadata>
  <memory unit='MiB'>64</memory>
  <vcpu>1</vcpu>
  $4
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
numa="<numatune><memory mode='strict' nodeset='0'/></numatune><cpu><numa><cell id='0' cpus='0' memory='65536' unit='KiB'/></numa></cpu>"
vf() {
  echo "<interface type='hostdev' managed='yes'><mac address='52:54:00:00:00:01'/><source><address type='pci' domain='0x0000' bus='0x$1' slot='0x10' function='0x0'/></source><alias name='ua-data0'/></interface>"
}
calls() { grep -c "^$1 $2 begin - rc=$3\$" "$work/calls" || true; }

# (a) no vpa metadata: starts, and its definition is what it was.
domain "$prefix-plain" "" "" "" > "$work/plain.xml"
virsh define "$work/plain.xml" >/dev/null
virsh dumpxml --inactive "$prefix-plain" > "$work/plain.before"
virsh start "$prefix-plain" >/dev/null || fail "(a) a domain without metadata did not start"
[ "$(calls "$prefix-plain" prepare 0)" = 1 ] || fail "(a) the hook did not run at prepare begin: $(cat "$work/calls")"
virsh destroy "$prefix-plain" >/dev/null
virsh dumpxml --inactive "$prefix-plain" > "$work/plain.after"
diff -u "$work/plain.before" "$work/plain.after" || fail "(a) the definition changed"
echo "ok (a) a domain without metadata starts; prepare begin exits 0"

# (b) VF 0000:82:10.0 is on host node 1; the guest is bound to node 0.
domain "$prefix-bad" "$port_md" "$(vf 82)" "$numa" > "$work/bad.xml"
virsh define "$work/bad.xml" >/dev/null
if virsh start "$prefix-bad" > "$work/bad.out" 2>&1; then
  fail "(b) a domain breaking its required policy started"
fi
grep -q "Hook script execution failed" "$work/bad.out" || fail "(b) not a hook failure: $(cat "$work/bad.out")"
grep -q "virt-pci-affinity: domain '$prefix-bad'" "$work/bad.out" || fail "(b) our line is missing: $(cat "$work/bad.out")"
cat "$work/bad.out" >&2
grep -q "required" "$work/bad.out" || fail "(b) the policy is not named: $(cat "$work/bad.out")"
[ "$(calls "$prefix-bad" prepare 1)" = 1 ] || fail "(b) prepare begin did not exit 1: $(cat "$work/calls")"
echo "ok (b) virsh start fails with: $(grep -o 'virt-pci-affinity: .*' "$work/bad.out" | head -1)"

# (c) VF 0000:81:10.0 is on node 0 like the guest: our hook passes, and
# libvirt fails on the VF that this machine does not have.
domain "$prefix-good" "$port_md" "$(vf 81)" "$numa" > "$work/good.xml"
virsh define "$work/good.xml" >/dev/null
if virsh start "$prefix-good" > "$work/good.out" 2>&1; then
  fail "(c) a domain with a VF this machine lacks started"
fi
[ "$(calls "$prefix-good" prepare 0)" = 1 ] || fail "(c) prepare begin did not pass: $(cat "$work/calls")"
if grep -q "virt-pci-affinity" "$work/good.out"; then
  fail "(c) our hook refused a compliant domain: $(cat "$work/good.out")"
fi
echo "ok (c) the hook passes; libvirt fails with: $(grep error: "$work/good.out" | tail -1)"

# (d) save and restore: restore begin prints nothing, the XML is unchanged.
domain "$prefix-save" "<vpa:affinity xmlns:vpa='$ns'><vpa:image policy='preferred'/></vpa:affinity>" "" "" \
  > "$work/save.xml"
virsh define "$work/save.xml" >/dev/null
virsh start "$prefix-save" >/dev/null
virsh dumpxml "$prefix-save" | grep -v "<domain \|<uid>" > "$work/save.before" || true
virsh save "$prefix-save" "$work/save.img" >/dev/null
virsh restore "$work/save.img" >/dev/null || fail "(d) restore failed"
[ "$(calls "$prefix-save" restore 0)" = 1 ] || fail "(d) restore begin did not run: $(cat "$work/calls")"
virsh dumpxml "$prefix-save" | grep -v "<domain \|<uid>" > "$work/save.after" || true
grep -q "vpa:image policy=.preferred." "$work/save.after" || fail "(d) the metadata was lost"
diff -u <(grep -A3 "<metadata>" "$work/save.before") <(grep -A3 "<metadata>" "$work/save.after") \
  || fail "(d) the metadata changed"
virsh destroy "$prefix-save" >/dev/null
echo "ok (d) save/restore passes through unchanged"
