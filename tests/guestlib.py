# SPDX-License-Identifier: LGPL-2.1-or-later
"""What the suites that boot a Linux guest under QEMU share: the host's
kernel, busybox-static, cpio 'newc' records for an initramfs."""
import glob
import os
import shutil

QEMU = "qemu-system-x86_64"


class Missing(Exception):
    """Something the guest needs is not installed."""


def newc_entry(name, data, mode):
    """One cpio 'newc' record (what the kernel unpacks as initramfs)."""
    namez = name.encode() + b"\0"
    hdr = "070701" + "".join("%08X" % v for v in (
        0, mode, 0, 0, 1, 0, len(data), 0, 0, 0, 0, len(namez), 0))
    out = hdr.encode() + namez
    out += b"\0" * ((4 - len(out) % 4) % 4)
    out += data
    out += b"\0" * ((4 - len(out) % 4) % 4)
    return out


def has_interpreter(elf):
    """A dynamically linked ELF64 names its loader in a PT_INTERP header."""
    phoff = int.from_bytes(elf[0x20:0x28], "little")
    phsize = int.from_bytes(elf[0x36:0x38], "little")
    phnum = int.from_bytes(elf[0x38:0x3a], "little")
    return any(int.from_bytes(elf[phoff + i * phsize:phoff + i * phsize + 4], "little") == 3
               for i in range(phnum))


def busybox():
    """The bytes of a statically linked busybox."""
    path = shutil.which("busybox")
    if path is None:
        raise Missing("busybox-static is not installed (tools/install-deps installs it)")
    blob = open(path, "rb").read()
    if has_interpreter(blob):
        raise Missing("%s is not statically linked (install busybox-static)" % path)
    return blob


def kernel():
    """The newest /boot/vmlinuz-*, the kernel the guests boot."""
    found = sorted(glob.glob("/boot/vmlinuz-*"))
    if not found:
        raise Missing("no /boot/vmlinuz-* (tools/install-deps installs linux-image-amd64)")
    return found[-1]


def kernel_release():
    return os.path.basename(kernel())[len("vmlinuz-"):]
