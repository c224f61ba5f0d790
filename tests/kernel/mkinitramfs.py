#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Builds the proving ground's initramfs: busybox-static, the modules that
mount the host's root over 9p with a tmpfs overlay, and an init that
switch_roots into it and runs the scenario named on the kernel command
line (vpa.run=PATH, a path in the host's tree; vpa.build=DIR, the
build directory the scenario runs the product from).

Usage: mkinitramfs.py OUTPUT [KERNEL-RELEASE]
"""
import gzip
import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import guestlib  # noqa: E402

# In load order: what 9p over virtio and overlayfs need.
MODULES = ["netfs", "fscache", "9pnet", "9p", "virtio_ring", "virtio",
           "virtio_pci_modern_dev", "virtio_pci_legacy_dev", "virtio_pci",
           "9pnet_virtio", "overlay"]

INIT = r"""#!/bin/busybox sh
B=/bin/busybox
$B mkdir -p /proc /sys /dev /lower /upper /newroot
$B mount -t proc proc /proc
$B mount -t sysfs sysfs /sys
$B mount -t devtmpfs devtmpfs /dev
for m in %(mods)s; do $B insmod /lib/mod/$m.ko 2>/dev/null; done
run=
for a in $($B cat /proc/cmdline); do
  case $a in
    vpa.run=*) run=${a#vpa.run=} ;;
    vpa.build=*) export VPA_BUILD=${a#vpa.build=} ;;
  esac
done
fail() { echo "VPA-INIT-FAIL $*"; $B poweroff -f; }
$B mount -t 9p -o trans=virtio,version=9p2000.L,ro,cache=loose hostroot /lower || fail mount hostroot
$B mount -t tmpfs -o size=256m tmpfs /upper
$B mkdir -p /upper/u /upper/w
$B mount -t overlay -o lowerdir=/lower,upperdir=/upper/u,workdir=/upper/w,redirect_dir=on overlay /newroot || fail overlay
$B mkdir -p /newroot/vpa-out
$B mount -t 9p -o trans=virtio,version=9p2000.L vpaout /newroot/vpa-out || fail mount vpaout
$B umount /proc /sys /dev
echo VPA-INIT-SWITCH
exec $B switch_root /newroot /bin/sh "$run"
"""


def modpath(release, name):
    out = subprocess.run(["modinfo", "-k", release, "-n", name],
                         capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit("mkinitramfs: module %s not found for %s" % (name, release))
    return out.stdout.strip()


def build(path, release):
    blob = guestlib.busybox()
    arc = b""
    for d in ("bin", "lib", "lib/mod"):
        arc += guestlib.newc_entry(d, b"", 0o040755)
    arc += guestlib.newc_entry("bin/busybox", blob, 0o100755)
    for m in MODULES:
        with open(modpath(release, m), "rb") as f:
            arc += guestlib.newc_entry("lib/mod/%s.ko" % m, f.read(), 0o100644)
    arc += guestlib.newc_entry("init", (INIT % {"mods": " ".join(MODULES)}).encode(),
                               0o100755)
    arc += guestlib.newc_entry("TRAILER!!!", b"", 0)
    with gzip.open(path, "wb", compresslevel=1) as f:
        f.write(arc)


if __name__ == "__main__":
    if len(sys.argv) not in (2, 3):
        sys.exit("usage: mkinitramfs.py OUTPUT [KERNEL-RELEASE]")
    build(sys.argv[1], sys.argv[2] if len(sys.argv) == 3 else guestlib.kernel_release())
