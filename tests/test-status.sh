#!/usr/bin/env bash
# virt-pci-affinity status (docs/operations.md) on a host built under a
# directory (--root): the hook link where libvirtd reads hooks, the
# daemon's pid file and /proc entries, the configuration, the hook's
# inventory against -c, the mode and the verdict counters. Healthy is
# exit 0; each unhealthy state is exit 1 with the one line that says
# what to fix and how.
set -euo pipefail

cli=${1:?usage: test-status.sh CLI HOOK QEMU_D}
hook=$(realpath "${2:?usage: test-status.sh CLI HOOK QEMU_D}")
qemu_d=${3:?usage: test-status.sh CLI HOOK QEMU_D}
data=${VPA_TEST_DATA:?}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
n=0
failed=0
ok() { n=$((n + 1)); echo "ok $n $*"; }
notok() { n=$((n + 1)); echo "not ok $n $*"; failed=1; }

root=$work/root
H=test://$data/hosts/dual-socket.xml
now=$(date +%s)
boot=$((now - 86400))
hz=$(getconf CLK_TCK)
pid=4242

# host HOOK DAEMON_AGE: the hook link made now (HOOK "-": none), libvirtd
# started DAEMON_AGE seconds ago (negative: after the link; "-": none).
# status takes the link's change time, which touch cannot set back, so
# the daemon's start moves instead.
host() {
  rm -rf "$root"
  mkdir -p "$root$qemu_d" "$root/run" "$root/proc/$pid"
  if [ "$1" != - ]; then
    ln -s "$hook" "$root$qemu_d/virt-pci-affinity"
    touch -h -d "@$((now - 86400))" "$root$qemu_d/virt-pci-affinity"  # as dpkg sets it
  fi
  if [ "$2" != - ]; then
    echo "$pid" > "$root/run/libvirtd.pid"
    printf 'cpu 0 0 0 0\nbtime %s\nprocesses 1\n' "$boot" > "$root/proc/stat"
    printf '%s (libvirtd) S %s%s 0 0\n' "$pid" "$(printf '0 %.0s' $(seq 18))" \
      "$(( (now - $2 - boot) * hz ))" > "$root/proc/$pid/stat"
  fi
  cp "$data/hosts/dual-socket.conf" "$work/c.conf"
  printf '[inventory]\nsource=%s/hosts/dual-socket.xml\n[hook]\nstate-dir=%s/state\n' "$data" "$work" >> "$work/c.conf"
}
# expect STATUS DESC [GREP...]: runs status; every GREP pattern must match a stdout line
expect() {
  local want=$1 desc=$2 rc=0
  shift 2
  "$cli" status --root "$root" -c "$H" --config "$work/c.conf" > "$work/out" 2> "$work/err" || rc=$?
  if [ "$rc" != "$want" ]; then
    cat "$work/out" "$work/err" >&2
    notok "$desc: exit $rc, expected $want"
    return
  fi
  for pat in "$@"; do
    if ! grep -q -- "$pat" "$work/out"; then
      cat "$work/out" >&2
      notok "$desc: no line matches '$pat'"
      return
    fi
  done
  ok "$desc"
}

host 1 -60
expect 0 "healthy" "^ok   hook: $qemu_d/virt-pci-affinity -> $hook, where libvirtd reads qemu hooks$" \
  "^ok   daemon: libvirtd (pid $pid) started .*, after the hook .*: it runs it$" \
  "^ok   config: $work/c.conf parses" \
  "^ok   inventory: the hook's source $data/hosts/dual-socket.xml sees the same 41 PCI devices as $H$" \
  "^ok   reservations: no device reserved ($work/state/reservations)$" \
  "^ok   mode: enforce$" "^ok   verdicts: none yet"
[ ! -s "$work/err" ] && ok "healthy: nothing on stderr" || notok "healthy: stderr not empty"

host - -60
expect 1 "hook missing" "^FIX  hook: $qemu_d/virt-pci-affinity is missing, .*: install the package again"
grep -q '^virt-pci-affinity: status: 1 thing to fix, each on stdout$' "$work/err" &&
  ok "one summary line on stderr" || notok "one summary line on stderr"

host 1 3600
expect 1 "daemon older than the hook" \
  "^FIX  daemon: libvirtd (pid $pid) started .*, before the hook was installed .*: restart libvirtd (systemctl restart libvirtd)$"

host 1 -
expect 0 "no daemon running" "^ok   daemon: no libvirtd or virtqemud runs"

host 1 -60
rm "$hook.notthere" 2> /dev/null || true
ln -sfn "$hook.notthere" "$root$qemu_d/virt-pci-affinity"
expect 1 "a dangling hook link" "^FIX  hook: .* is not a program libvirtd can run"

host 1 -60
sed -i 's|^\[hook\]|[hook]\nmode=warn|' "$work/c.conf"
expect 1 "config error" "^FIX  config: $work/c.conf: \[hook\] mode='warn': expected enforce or audit: fix it"

host 1 -60
rm "$work/c.conf"
expect 1 "config missing" "^FIX  config: $work/c.conf does not exist"

host 1 -60
sed -i "s|^source=.*|source=$data/hosts/gpu-server.xml|" "$work/c.conf"
expect 1 "inventory disagreement" \
  "^FIX  inventory: the hook's source $data/hosts/gpu-server.xml sees .* PCI devices, $H sees 41 (first: .*): point \[inventory\] source at this host"

host 1 -60
sed -i 's|^\[hook\]|[hook]\nmode=audit|' "$work/c.conf"
mkdir -p "$work/state"
printf '# virt-pci-affinity hook verdicts 1\ncount start would-refuse policy 2\nrecent 1764633600 start would-refuse policy vm1\n' > "$work/state/verdicts"
expect 0 "audit mode and recent verdicts" "^ok   mode: audit" \
  "^ok   verdicts: 0 refused, 2 would-refuse$" "^  2025-12-02T00:00:00Z start would-refuse (policy) domain 'vm1'$"

host 1 -60
mkdir -p "$work/state"
printf '# virt-pci-affinity reservations 1\n0000:6b:00.0 quarantine 1718000000 QAT firmware hang\n0000:ca:00.0 one-time-use 1718000000 - gpu-vm\n' > "$work/state/reservations"
expect 0 "reserved devices" \
  "^ok   reservations: 2 reservation(s), 1 one-time-use and 1 quarantine ($work/state/reservations): virt-pci-affinity device list$"

host 1 -60
printf '# virt-pci-affinity reservations 1\n0000:ca:00.0 one-time-use\n' > "$work/state/reservations"
expect 1 "reservations that cannot be read" \
  "^FIX  reservations: $work/state/reservations:2: '0000:ca:00.0 one-time-use': expected ADDRESS KIND SINCE and more: until it reads, the hook refuses every domain with a PCI device .*; move it aside"
grep -q '^virt-pci-affinity: status: 1 thing to fix, each on stdout$' "$work/err" &&
  ok "reservations: one summary line on stderr" || notok "reservations: one summary line on stderr"
rm "$work/state/reservations"

echo "1..$n"
exit $failed
