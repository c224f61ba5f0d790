# SPDX-License-Identifier: LGPL-2.1-or-later
# Sourced by the guest-side scenario scripts (they run as PID 1 in the
# proving ground, tests/kernel/machine.py). Results go to /vpa-out, which
# the test reads back on the host.
OUT=/vpa-out
HERE=$(dirname "$0")
SRC=$(cd "$HERE/../../.." && pwd)
BUILD=${VPA_BUILD:-$SRC/build}
CLI=$BUILD/hooks/virt-pci-affinity
CONF=$SRC/data/kernel/kernel.conf
PFS="0000:41:00.0 0000:81:00.0 0000:01:00.0"
export PATH=/usr/sbin:/usr/bin:/sbin:/bin

# One line on the console per step, with the guest's uptime.
step() { echo "VPA-STEP $(cut -d' ' -f1 /proc/uptime) $*"; }

finish() {
  step done
  sync
  echo VPA-DONE
  poweroff -f
}

setup() {
  mount -t proc proc /proc
  mount -t sysfs sysfs /sys
  mount -t devtmpfs devtmpfs /dev
  mkdir -p /dev/pts /dev/shm /run /tmp
  mount -t devpts devpts /dev/pts
  mount -t tmpfs tmpfs /run
  mkdir -p /run/lock
  # /tmp stays the overlay's: a tmpfs over it would hide a tree checked out
  # under the host's /tmp (the root is writable already).
  mount -t tmpfs tmpfs /dev/shm
  trap finish EXIT
  step up
  modprobe nvme
  modprobe vfio-pci
  for pf in $PFS; do
    # QEMU's VFs are offline secondary controllers nvme cannot start.
    echo 0 > /sys/bus/pci/devices/$pf/sriov_drivers_autoprobe
  done
}

# numvfs PF N: SR-IOV on PF with N VFs (through 0: the kernel refuses a
# change between two non-zero counts).
numvfs() {
  echo 0 > /sys/bus/pci/devices/$1/sriov_numvfs
  [ "$2" -eq 0 ] || echo "$2" > /sys/bus/pci/devices/$1/sriov_numvfs
}

# vfio VF: binds VF to vfio-pci, as libvirt does for a managed hostdev.
vfio() {
  echo vfio-pci > /sys/bus/pci/devices/$1/driver_override
  echo "$1" > /sys/bus/pci/drivers_probe
}

# run NAME CMD...: CMD's stdout, stderr and exit status in $OUT/NAME.*
run() {
  name=$1
  shift
  "$@" > "$OUT/$name.out" 2> "$OUT/$name.err"
  echo $? > "$OUT/$name.rc"
}

facts() { run "$1" python3 "$SRC/tests/kernel/guest/sysfs-facts.py"; }

# views TAG ARGS...: every read-only view of one source, as JSON.
views() {
  tag=$1
  shift
  for v in pools devices topology nodes traits; do
    run "$tag-$v" "$CLI" "$v" --config "$CONF" --format json "$@"
  done
}

# udev and libvirtd as the host would run them (no systemd here).
start_libvirtd() {
  /lib/systemd/systemd-udevd --daemon
  udevadm trigger --action=add
  udevadm settle --timeout=120
  step udev settled
  getent group kvm >/dev/null || groupadd -r kvm
  getent group libvirt-qemu >/dev/null || groupadd -r libvirt-qemu
  id libvirt-qemu >/dev/null 2>&1 || useradd -r -g kvm -s /usr/sbin/nologin libvirt-qemu
  mkdir -p /var/log/libvirt /run/libvirt /var/lib/libvirt/qemu /var/cache/libvirt
  cat > /etc/libvirt/qemu.conf <<'CONF'
user = "root"
group = "root"
security_driver = "none"
cgroup_controllers = []
CONF
  virtlogd -d
  libvirtd -d
  i=0
  until virsh -c qemu:///system version >/dev/null 2>&1; do
    i=$((i + 1))
    [ $i -lt 120 ] || { step libvirtd did not answer; return 1; }
    sleep 1
  done
  step libvirtd up
}

# settle: udev has told libvirtd every change (the kernel is asynchronous).
settle() { udevadm settle --timeout=60; }
