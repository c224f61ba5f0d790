#!/usr/bin/env bash
# Starts virtlogd and libvirtd (QEMU driver, TCG) as root without systemd,
# for the real-daemon suite. Installs nothing: .ci/run installs packages.
# Records what it started in $VPA_LIBVIRTD_STATE so stop.sh stops exactly
# that, by pid. A daemon that already answers is left alone.
#
# Optional: VPA_LIBVIRTD_HOOK=FILE installs FILE as the qemu.d hook
# (libvirtd reads hooks only at start-up); stop.sh removes it.
set -euo pipefail

state=${VPA_LIBVIRTD_STATE:-/run/vpa-test-libvirtd}
uri=qemu:///system

if [ "$(id -u)" -ne 0 ]; then
  echo "start.sh: must run as root (libvirtd's QEMU driver, qemu:///system)" >&2
  exit 77
fi
for tool in libvirtd virtlogd virsh qemu-system-x86_64; do
  command -v "$tool" >/dev/null || { echo "start.sh: $tool not installed" >&2; exit 77; }
done
if [ -e "$state/libvirtd.pid" ]; then
  if kill -0 "$(cat "$state/libvirtd.pid")" 2>/dev/null; then
    echo "start.sh: $state/libvirtd.pid exists; run stop.sh first" >&2
    exit 1
  fi
  # Left over from a run that was killed: its daemon is gone.
  rm -f "$state/libvirtd.pid"
fi
if virsh -c "$uri" version >/dev/null 2>&1; then
  echo "start.sh: a libvirtd already answers on $uri; using it, starting nothing"
  exit 0
fi

mkdir -p "$state"
chmod 0700 "$state"

# The QEMU driver refuses to start unless its compiled-in user exists.
getent group kvm >/dev/null || groupadd -r kvm
# libvirtd 9 also resolves a group of the same name as its QEMU user.
getent group libvirt-qemu >/dev/null || groupadd -r libvirt-qemu
id libvirt-qemu >/dev/null 2>&1 || useradd -r -g kvm -s /usr/sbin/nologin libvirt-qemu
mkdir -p /var/log/libvirt /run/libvirt /var/lib/libvirt/qemu /var/cache/libvirt \
         /etc/libvirt/hooks/qemu.d

# Containers have no cgroup delegation, no SELinux/AppArmor, no KVM.
if [ -e /etc/libvirt/qemu.conf ] && [ ! -e "$state/qemu.conf.orig" ]; then
  cp -p /etc/libvirt/qemu.conf "$state/qemu.conf.orig"
fi
cat > /etc/libvirt/qemu.conf <<'CONF'
user = "root"
group = "root"
security_driver = "none"
dynamic_ownership = 0
cgroup_controllers = []
CONF
touch "$state/qemu.conf.installed"

if [ -n "${VPA_LIBVIRTD_HOOK:-}" ]; then
  install -m 0755 "$VPA_LIBVIRTD_HOOK" /etc/libvirt/hooks/qemu.d/virt-pci-affinity
  touch "$state/hook.installed"
fi

export LIBVIRT_LOG_OUTPUTS="3:file:$state/libvirtd.log"
virtlogd -d -p "$state/virtlogd.pid"
libvirtd -d -p "$state/libvirtd.pid"

for _ in $(seq 100); do
  if virsh -c "$uri" version >/dev/null 2>&1; then
    echo "start.sh: libvirtd $(cat "$state/libvirtd.pid") and virtlogd $(cat "$state/virtlogd.pid") answer on $uri"
    exit 0
  fi
  sleep 0.1
done
echo "start.sh: libvirtd did not answer on $uri within 10 s; see $state/libvirtd.log" >&2
"$(dirname "$0")/stop.sh" || true
exit 1
