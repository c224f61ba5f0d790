#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# meson install script: renames the installed hook front to the name
# libvirt's qemu.d expects, and installs the sample configuration unless
# the operator already has one.
# Arguments: QEMU_D_DIR CONF_DIR SAMPLE_CONF (absolute, without DESTDIR).
set -eu
qemu_d="${DESTDIR:-}$1"
conf_dir="${DESTDIR:-}$2"
sample="$3"

mv -f "$qemu_d/virt-pci-affinity-hook" "$qemu_d/virt-pci-affinity"
echo "Renamed $qemu_d/virt-pci-affinity-hook to virt-pci-affinity"

mkdir -p "$conf_dir"
if [ -e "$conf_dir/virt-pci-affinity.conf" ]; then
  echo "Kept $conf_dir/virt-pci-affinity.conf (sample not installed over it)"
else
  cp "$sample" "$conf_dir/virt-pci-affinity.conf"
  chmod 0644 "$conf_dir/virt-pci-affinity.conf"
  echo "Installing $sample to $conf_dir"
fi
