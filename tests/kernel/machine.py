#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Starts the proving ground: the host's kernel under QEMU TCG, two
sockets with a NUMA node each, an IOMMU, SR-IOV NVMe PFs on node 0, on
node 1 and on the main root complex (no NUMA node), a plain NIC on each
node. The host's root is the guest's (read-only 9p under a tmpfs
overlay); the guest runs one scenario script and leaves its results in
OUT-DIR, shared writable over 9p at /vpa-out.

Usage: machine.py INITRD OUT-DIR SCRIPT [TIMEOUT [BUILD-DIR]]
(prints the console)
"""
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import guestlib  # noqa: E402

# Where the proving ground puts each device: (id, QEMU device, expander
# bus or None for pcie.0). The test reads what the kernel made of them.
EXPANDERS = [("pxb0", 0x40, 0), ("pxb1", 0x80, 1)]
DEVICES = [
    ("nvme0", "nvme", "pxb0"),
    ("nic0", "e1000e", "pxb0"),
    ("nvme1", "nvme", "pxb1"),
    ("nic1", "e1000e", "pxb1"),
    ("nvme2", "nvme", None),
]
MAX_VFS = 4


def accel_usable():
    """None when QEMU can run a TCG guest, else why not."""
    try:
        out = subprocess.run([guestlib.QEMU, "-accel", "help"], capture_output=True,
                             text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired) as e:
        return "%s cannot run: %s" % (guestlib.QEMU, e)
    if out.returncode != 0 or "tcg" not in out.stdout:
        return "%s has no TCG accelerator" % guestlib.QEMU
    return None


def device_args():
    args = []
    for pxb, busnr, node in EXPANDERS:
        args += ["-device", "pxb-pcie,id=%s,bus_nr=%d,numa_node=%d,bus=pcie.0"
                 % (pxb, busnr, node)]
    for chassis, (dev, model, pxb) in enumerate(DEVICES, start=1):
        rp = "rp-" + dev
        args += ["-device", "pcie-root-port,id=%s,bus=%s,chassis=%d,slot=%d%s"
                 % (rp, pxb or "pcie.0", chassis, chassis,
                    ",addr=0x%x" % (chassis + 8) if pxb is None else "")]
        if model == "nvme":
            args += ["-device", "nvme-subsys,id=sub-%s,nqn=vpa-%s" % (dev, dev),
                     "-device", "nvme,id=%s,bus=%s,serial=vpa%s,subsys=sub-%s,"
                     "sriov_max_vfs=%d,sriov_vq_flexible=%d,sriov_vi_flexible=%d,"
                     "max_ioqpairs=%d,msix_qsize=%d"
                     % (dev, rp, dev, dev, MAX_VFS, 2 * MAX_VFS, MAX_VFS,
                        2 * MAX_VFS + 2, MAX_VFS + 1)]
        else:
            args += ["-device", "%s,id=%s,bus=%s,romfile=" % (model, dev, rp)]
    return args


def qemu_args(initrd, out, script, mem_mib=1024, build=None):
    per = mem_mib // 2
    args = ["nice", "-n", "10", guestlib.QEMU,
            "-accel", "tcg,thread=single",
            "-machine", "q35,kernel-irqchip=split", "-cpu", "max",
            "-smp", "4,sockets=2,cores=2,threads=1", "-m", "%dM" % mem_mib,
            "-nographic", "-no-reboot", "-nodefaults", "-serial", "stdio",
            "-net", "none", "-kernel", guestlib.kernel(), "-initrd", initrd,
            "-append", "console=ttyS0 panic=-1 quiet no_timer_check intel_iommu=on iommu=pt "
            "vpa.run=%s%s" % (script, " vpa.build=" + build if build else "")]
    for n in (0, 1):
        args += ["-object", "memory-backend-ram,id=m%d,size=%dM" % (n, per),
                 "-numa", "node,nodeid=%d,cpus=%d-%d,memdev=m%d" % (n, 2 * n, 2 * n + 1, n)]
    args += ["-device", "intel-iommu,intremap=on,caching-mode=on"]
    args += device_args()
    # Explicitly on pcie.0: an expander bus takes bridges only.
    args += ["-fsdev", "local,id=fs0,path=/,security_model=none,readonly=on,multidevs=remap",
             "-device", "virtio-9p-pci,fsdev=fs0,mount_tag=hostroot,bus=pcie.0",
             "-fsdev", "local,id=fs1,path=%s,security_model=none" % out,
             "-device", "virtio-9p-pci,fsdev=fs1,mount_tag=vpaout,bus=pcie.0"]
    return args


def boot(initrd, out, script, timeout=300, mem_mib=1024, build=None):
    """Runs SCRIPT in a fresh machine; (console text, seconds, timed out)."""
    os.makedirs(out, exist_ok=True)
    start = time.monotonic()
    try:
        run = subprocess.run(qemu_args(initrd, os.path.abspath(out), script, mem_mib, build),
                             stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                             stderr=subprocess.STDOUT, timeout=timeout)
        console, late = run.stdout, False
    except subprocess.TimeoutExpired as e:
        console, late = e.stdout or b"", True
    return console.decode(errors="replace"), time.monotonic() - start, late


if __name__ == "__main__":
    if len(sys.argv) not in (4, 5, 6):
        sys.exit("usage: machine.py INITRD OUT-DIR SCRIPT [TIMEOUT [BUILD-DIR]]")
    text, took, late = boot(sys.argv[1], sys.argv[2], os.path.abspath(sys.argv[3]),
                            int(sys.argv[4]) if len(sys.argv) >= 5 else 300,
                            build=os.path.abspath(sys.argv[5]) if len(sys.argv) == 6 else None)
    sys.stdout.write(text)
    print("machine: %.1f s%s" % (took, ", timed out" if late else ""))
    sys.exit(1 if late else 0)
