#!/usr/bin/env bash
# debian/virt-pci-affinity.{preinst,postinst}: the restart note on the
# first install, and after a remove whenever `status` finds the running
# daemon older than the hook; none on an upgrade. The scripts run with a
# stand-in virt-pci-affinity first in PATH that answers as status would;
# the note file is the real /run one when run as root, so the test runs
# them only when it can write there and leaves nothing behind.
set -euo pipefail

src=${1:?usage: test-postinst.sh SOURCE_ROOT}
work=$(mktemp -d)
trap 'rm -rf "$work"; rm -f /run/virt-pci-affinity/reinstall' EXIT
n=0
failed=0
ok() { n=$((n + 1)); echo "ok $n $*"; }
notok() { n=$((n + 1)); echo "not ok $n $*"; failed=1; }

if ! mkdir -p /run/virt-pci-affinity 2> /dev/null || [ ! -w /run/virt-pci-affinity ] ||
  [ -e /run/virt-pci-affinity/reinstall ]; then
  echo "1..0 # SKIP /run/virt-pci-affinity is not ours to write"
  exit 0
fi
mkdir "$work/bin"
stub() { # stub DAEMON_LINE: what the stand-in status prints
  printf '#!/bin/sh\n[ "$1" = status ] || exit 2\necho "%s"\nexit 1\n' "$1" > "$work/bin/virt-pci-affinity"
  chmod +x "$work/bin/virt-pci-affinity"
}
# run ARGS...: preinst then postinst as dpkg calls them; stdout to $work/out
run() {
  local pre=$1 post=$2
  shift 2
  # shellcheck disable=SC2086
  PATH=$work/bin:$PATH sh "$src/debian/virt-pci-affinity.preinst" $pre > /dev/null
  # shellcheck disable=SC2086
  PATH=$work/bin:$PATH sh "$src/debian/virt-pci-affinity.postinst" $post > "$work/out"
}
older='FIX  daemon: libvirtd (pid 1) started ..., before the hook was installed (...), so it does not run it: restart libvirtd'
newer='ok   daemon: libvirtd (pid 1) started ..., after the hook (...): it runs it'

stub "$older"
run "install" "configure"
grep -q 'then restart the libvirtd (or virtqemud) service' "$work/out" && ok "first install: the note" || notok "first install: the note"

run "install 0.1.0" "configure 0.1.0"
grep -q 'started before it and does not run' "$work/out" && ok "reinstall after remove, daemon older: the note" ||
  notok "reinstall after remove, daemon older: the note"
[ ! -e /run/virt-pci-affinity/reinstall ] && ok "the reinstall mark is gone" || notok "the reinstall mark is gone"

stub "$newer"
run "install 0.1.0" "configure 0.1.0"
[ ! -s "$work/out" ] && ok "reinstall, daemon restarted since: no note" || notok "reinstall, daemon restarted since: no note"

stub "$older"
run "upgrade 0.1.0" "configure 0.1.0"
[ ! -s "$work/out" ] && ok "upgrade: no note" || notok "upgrade: no note"

echo "1..$n"
exit $failed
