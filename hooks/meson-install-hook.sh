#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# meson install script: installs the sample configuration unless the
# operator already has one (meson would overwrite it). The hook itself is
# an ordinary installed symbolic link (hooks/meson.build).
# Arguments: CONF_DIR SAMPLE_CONF (absolute, without DESTDIR).
set -eu
conf_dir="${DESTDIR:-}$1"
sample="$2"

mkdir -p "$conf_dir"
if [ -e "$conf_dir/virt-pci-affinity.conf" ]; then
  echo "Kept $conf_dir/virt-pci-affinity.conf (sample not installed over it)"
else
  cp "$sample" "$conf_dir/virt-pci-affinity.conf"
  chmod 0644 "$conf_dir/virt-pci-affinity.conf"
  echo "Installing $sample to $conf_dir"
fi
