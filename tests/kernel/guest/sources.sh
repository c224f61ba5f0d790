#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# The three sources agree, and pools follow sriov_numvfs live: sysfs:/,
# the real libvirtd's node devices and a snapshot of it, with a defined
# domain holding one of node 1's VFs; then node 1's PF goes 4 -> 0 -> 2
# VFs and every view is read again at once (README.md in this folder).
. "$(dirname "$0")/common.sh"
setup
for pf in $PFS; do numvfs $pf 4; done
# Two of node 0's VFs on vfio-pci (as a started guest would leave them).
vfio 0000:41:00.1
vfio 0000:41:00.2
step vfs created
start_libvirtd || exit 1
run define virsh -c qemu:///system define "$SRC/data/kernel/holder.xml"
facts facts
U=qemu:///system
views sysfs -c $U --inventory sysfs:/
views libvirt -c $U
run sysfs-snapshot "$CLI" snapshot --config "$CONF" -c $U --inventory sysfs:/
run libvirt-snapshot "$CLI" snapshot --config "$CONF" -c $U
views snap -c $U --inventory "$OUT/libvirt-snapshot.out"
step views
# Live: node 1's PF (whose VF 2 the domain holds) 4 -> 0 -> 2 VFs.
for n in 4 0 2; do
  [ $n -eq 4 ] || numvfs 0000:81:00.0 $n
  settle
  facts facts-$n
  for src in sysfs libvirt; do
    inv=
    [ $src = libvirt ] || inv="--inventory sysfs:/"
    run $src-$n-pools "$CLI" pools --config "$CONF" --format json -c $U $inv
    run $src-$n-devices "$CLI" devices --config "$CONF" --format json -c $U $inv
    run $src-$n-check "$CLI" check --config "$CONF" -c $U $inv holder
  done
  run fleet-$n-sync "$CLI" fleet sync --store "/tmp/fleet.db" --config "$CONF" -c $U --host kernel
  run fleet-$n-pools "$CLI" fleet pools --store "/tmp/fleet.db" --host kernel --format json
  step numvfs $n
done
