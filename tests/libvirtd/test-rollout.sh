#!/usr/bin/env bash
# Real-daemon suite for rolling out the hook (docs/operations.md,
# "Rolling out"): libvirtd 9 with QEMU/TCG runs the built hook.
#   (a) enforce: a VF that breaks its port's `required` policy fails
#       `virsh start` with our line; the log line is read back; the
#       counter says prepare/refused/policy
#   (b) audit: the same domain passes the hook (libvirt then fails on
#       the VF this machine lacks, with its own message); the log line
#       says would-refuse; a domain's mode="enforce" is still refused
#   (c) `pools --format openmetrics` shows both counts; promtool is clean
#   (d) `status` on this daemon: healthy, then each unhealthy state it
#       reports: hook missing, daemon older than the hook, a config
#       error, an inventory that disagrees with -c
# The log line goes to a datagram socket this suite binds
# (VPA_SYSLOG_SOCKET, which the hook in its build tree honours): the
# container has no journald. Needs root and the daemon of
# tests/libvirtd/start.sh (restarted with the hook); exits 77 otherwise.
set -euo pipefail

hook=$(realpath "${1:?usage: test-rollout.sh HOOK CLI}")
cli=$(realpath "${2:?usage: test-rollout.sh HOOK CLI}")
data=${VPA_TEST_DATA:?}
here=$(cd "$(dirname "$0")" && pwd)
state=${VPA_LIBVIRTD_STATE:-/run/vpa-test-libvirtd}
uri=qemu:///system
prefix=vpa-rollout-$$
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
  echo "SKIP: the libvirtd on $uri was not started by tests/libvirtd/start.sh"
  exit 77
fi
if [ -e /etc/libvirt/hooks/qemu.d/virt-pci-affinity ]; then
  echo "SKIP: /etc/libvirt/hooks/qemu.d/virt-pci-affinity exists; not replacing it"
  exit 77
fi
command -v python3 >/dev/null || { echo "SKIP: python3 binds the log socket"; exit 77; }

work=$(mktemp -d)
listener=
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
  [ -z "$listener" ] || kill "$listener" 2>/dev/null || true
  restart "" || echo "test-rollout.sh: could not restart libvirtd without the hook" >&2
  rm -rf "$work"
}
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

# The log socket: every datagram appended to $work/log, one a line.
python3 - "$work/log.sock" "$work/log" <<'PY' &
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(sys.argv[1])
with open(sys.argv[2], "ab", buffering=0) as out:
    while True:
        out.write(s.recv(65536) + b"\n")
PY
listener=$!
for _ in $(seq 50); do [ -S "$work/log.sock" ] && break; sleep 0.1; done
[ -S "$work/log.sock" ] || fail "the log socket was not bound"
: > "$work/log"

conf() { # conf MODE
  sed -e "s|@DATA@|$data|g" -e "s|^state-dirs=.*|state-dirs=/run/libvirt/qemu;/etc/libvirt/qemu|" \
    "$data/hook/configs/two-node.conf" > "$work/vpa.conf"
  printf '[hook]\nmode=%s\nstate-dir=%s/state\n' "$1" "$work" >> "$work/vpa.conf"
}
conf enforce
cat > "$work/hook" <<WRAPPER
#!/bin/sh
VPA_CONFIG=$work/vpa.conf VPA_SYSLOG_SOCKET=$work/log.sock $hook "\$@"
rc=\$?
echo "\$* rc=\$rc" >> $work/calls
exit \$rc
WRAPPER
chmod 0755 "$work/hook"
: > "$work/calls"
restart "$work/hook"

ns=http://virt-pci-affinity.org/xmlns/libvirt/domain/1.0
domain() { # NAME AFFINITY-ATTRS
  cat <<DOM
<domain type='qemu'>
  <name>$1</name>
  <metadata><vpa:affinity xmlns:vpa='$ns' $2><vpa:port device='ua-data0' physnet='physnet1' policy='required'/></vpa:affinity></metadata>
  <memory unit='MiB'>64</memory>
  <vcpu>1</vcpu>
  <numatune><memory mode='strict' nodeset='0'/></numatune>
  <cpu><numa><cell id='0' cpus='0' memory='65536' unit='KiB'/></numa></cpu>
  <os><type arch='x86_64' machine='pc'>hvm</type></os>
  <devices>
    <emulator>/usr/bin/qemu-system-x86_64</emulator>
    <interface type='hostdev' managed='yes'><mac address='52:54:00:00:00:01'/><source><address type='pci' domain='0x0000' bus='0x82' slot='0x10' function='0x0'/></source><alias name='ua-data0'/></interface>
  </devices>
</domain>
DOM
}
calls() { grep -c "^$1 $2 begin - rc=$3\$" "$work/calls" || true; }

# (a) enforce: VF 0000:82:10.0 is on host node 1, the guest bound to 0.
domain "$prefix-bad" "" > "$work/bad.xml"
virsh define "$work/bad.xml" >/dev/null
if virsh start "$prefix-bad" > "$work/bad.out" 2>&1; then
  fail "(a) a domain breaking its required policy started"
fi
grep -q "virt-pci-affinity: domain '$prefix-bad': ua-data0: .* breaks policy required" "$work/bad.out" ||
  fail "(a) our line is missing: $(cat "$work/bad.out")"
grep -q "virt-pci-affinity\[[0-9]*\]: domain '$prefix-bad': prepare: refused (policy): ua-data0" "$work/log" ||
  fail "(a) no log line: $(cat "$work/log")"
grep -q '^<28>' "$work/log" || fail "(a) not priority warning, facility daemon: $(cat "$work/log")"
echo "ok (a) refused; logged: $(grep -o 'virt-pci-affinity\[.*' "$work/log" | head -1)"

# (b) audit: the hook lets it through; libvirt fails on the missing VF.
conf audit
: > "$work/log"
if virsh start "$prefix-bad" > "$work/audit.out" 2>&1; then
  virsh destroy "$prefix-bad" >/dev/null 2>&1 || true
fi
[ "$(calls "$prefix-bad" prepare 0)" -ge 1 ] || fail "(b) prepare begin did not pass in audit mode: $(cat "$work/calls")"
if grep -q "virt-pci-affinity: domain" "$work/audit.out"; then
  fail "(b) audit mode refused: $(cat "$work/audit.out")"
fi
grep -q "domain '$prefix-bad': prepare: would-refuse (policy): ua-data0" "$work/log" ||
  fail "(b) no would-refuse line: $(cat "$work/log")"
echo "ok (b) audited start passes the hook; libvirt says: $(grep error: "$work/audit.out" | tail -1)"

domain "$prefix-strict" "mode='enforce'" > "$work/strict.xml"
virsh define "$work/strict.xml" >/dev/null
if virsh start "$prefix-strict" > "$work/strict.out" 2>&1; then
  fail "(b) a domain with mode='enforce' started on an auditing host"
fi
grep -q "virt-pci-affinity: domain '$prefix-strict': ua-data0" "$work/strict.out" ||
  fail "(b) mode='enforce' was not refused by the hook: $(cat "$work/strict.out")"
echo "ok (b) mode='enforce' beats the host's audit"

# (c) the counters in the metrics.
"$cli" pools -c "test://$data/hook/hosts/two-node.xml" --config "$work/vpa.conf" --format openmetrics \
  > "$work/m.prom"
grep -q '^virt_pci_affinity_hook_verdicts_total{op="prepare",verdict="refused",reason="policy"} 2$' "$work/m.prom" ||
  fail "(c) refused count: $(grep hook_verdicts "$work/m.prom" | grep -v ' 0$')"
grep -q '^virt_pci_affinity_hook_verdicts_total{op="prepare",verdict="would-refuse",reason="policy"} [1-9]' "$work/m.prom" ||
  fail "(c) would-refuse count: $(grep hook_verdicts "$work/m.prom" | grep -v ' 0$')"
if command -v promtool >/dev/null; then
  promtool check metrics < "$work/m.prom" || fail "(c) promtool check metrics"
fi
echo "ok (c) the verdicts are in pools --format openmetrics"

# (d) status, with a root that is this system but for the daemon's pid
# file (start.sh keeps it in $state).
root=$work/root
mkdir -p "$root/run"
ln -s /etc "$root/etc"
ln -s /proc "$root/proc"
cp "$state/libvirtd.pid" "$root/run/libvirtd.pid"
snap=$data/hook/hosts/two-node.xml
status() { # status WANT-EXIT PATTERN [ARGS...]
  local want=$1 pat=$2 rc=0
  shift 2
  "$cli" status --root "$root" --config "$work/vpa.conf" --inventory "$snap" "$@" > "$work/st.out" 2>&1 || rc=$?
  [ "$rc" = "$want" ] || fail "status exited $rc, expected $want: $(cat "$work/st.out")"
  grep -q -- "$pat" "$work/st.out" || fail "status: no line '$pat': $(cat "$work/st.out")"
}
status 0 "^ok   daemon: libvirtd (pid $(cat "$state/libvirtd.pid")) started .*: it runs it$"
echo "ok (d) status: healthy"
hookfile=/etc/libvirt/hooks/qemu.d/virt-pci-affinity
touch -d '+1 hour' "$hookfile"
status 1 "^FIX  daemon: libvirtd .* before the hook was installed .*: restart libvirtd"
touch "$hookfile" -d '-1 hour'
echo "ok (d) status: daemon older than the hook"
mv "$hookfile" "$work/hook.away"
status 1 "^FIX  hook: $hookfile is missing"
mv "$work/hook.away" "$hookfile"
echo "ok (d) status: hook missing"
cp "$work/vpa.conf" "$work/vpa.good"
sed -i 's/^mode=audit/mode=sometimes/' "$work/vpa.conf"
status 1 "^FIX  config: .*\[hook\] mode='sometimes': expected enforce or audit"
cp "$work/vpa.good" "$work/vpa.conf"
echo "ok (d) status: config error"
status 1 "^FIX  inventory: the hook's source .* sees .* PCI devices, $uri sees" --inventory "$uri"
echo "ok (d) status: inventory disagreement"
