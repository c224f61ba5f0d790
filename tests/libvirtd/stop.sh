#!/usr/bin/env bash
# Stops what start.sh started (by the pids it recorded) and undoes its
# configuration changes. Does nothing when start.sh started nothing.
set -euo pipefail

state=${VPA_LIBVIRTD_STATE:-/run/vpa-test-libvirtd}
[ -d "$state" ] || exit 0

stop_pid() {
  local file=$1 pid
  [ -s "$file" ] || return 0
  pid=$(cat "$file")
  if kill -0 "$pid" 2>/dev/null; then
    kill "$pid"
    for _ in $(seq 50); do
      kill -0 "$pid" 2>/dev/null || break
      sleep 0.1
    done
    if kill -0 "$pid" 2>/dev/null; then
      echo "stop.sh: pid $pid ($file) ignored SIGTERM; sending SIGKILL" >&2
      kill -9 "$pid" 2>/dev/null || true
    fi
  fi
  rm -f "$file"
}

stop_pid "$state/libvirtd.pid"
stop_pid "$state/virtlogd.pid"

if [ -e "$state/hook.installed" ]; then
  rm -f /etc/libvirt/hooks/qemu.d/virt-pci-affinity "$state/hook.installed"
fi
if [ -e "$state/qemu.conf.installed" ]; then
  if [ -e "$state/qemu.conf.orig" ]; then
    mv -f "$state/qemu.conf.orig" /etc/libvirt/qemu.conf
  else
    rm -f /etc/libvirt/qemu.conf
  fi
  rm -f "$state/qemu.conf.installed"
fi
echo "stop.sh: stopped; log kept in $state/libvirtd.log"
