#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Which firmware maps a 128 GiB BAR behind an expander, and does our
<pcihole64> decide it? (a measurement, not part of the test suite)

Places data/guest-numa/q35-two-cells.xml as the guest-boot test does,
turns the output into the same QEMU command line (the GPU's stand-in an
ivshmem-plain with a 128 GiB BAR2 behind a pxb-pcie) and boots it once
per row below, one guest at a time under TCG, each with and without the
placed <pcihole64> as the host bridge's pci-hole64-size; then the same
BAR on a root port of pcie.0 under OVMF with pci=realloc. Prints one
line per boot: firmware, its knob, the hole, what the guest kernel
reports for the BAR (assigned range, or "not assigned"), seconds.
Then starts QEMU (no guest) with holes of 512 GiB and 1 TiB on a
40-bit and a 43-bit CPU, to show where QEMU itself refuses the hole.

docs/guest-numa.md ("What the hole does, measured") holds the results.
About 9 minutes on two cores (14 boots of 19-54 s).

Usage: firmware-matrix.py CLI DATA-DIR WORK-DIR
"""
import importlib.util
import os
import re
import subprocess
import sys
import time
import xml.etree.ElementTree as ET

HERE = os.path.dirname(os.path.abspath(__file__))
spec = importlib.util.spec_from_file_location(
    "guest_boot", os.path.join(HERE, "test-guest-boot.py"))
gb = importlib.util.module_from_spec(spec)
spec.loader.exec_module(gb)

OVMF = "/usr/share/OVMF/OVMF_CODE.fd"
# (firmware, what is set besides the placed layout, extra QEMU args)
ROWS = [
    ("SeaBIOS", "-", []),
    ("OVMF", "-", ["-bios", OVMF]),
    ("OVMF", "X-PciMmio64Mb=262144", ["-bios", OVMF, "-fw_cfg",
                                      "name=opt/ovmf/X-PciMmio64Mb,string=262144"]),
    ("OVMF", "X-PciMmio64Mb=524288", ["-bios", OVMF, "-fw_cfg",
                                      "name=opt/ovmf/X-PciMmio64Mb,string=524288"]),
    ("OVMF", "phys-bits=43", ["-bios", OVMF, "-cpu", "qemu64,phys-bits=43"]),
    ("OVMF", "phys-bits=43,+pdpe1gb", ["-bios", OVMF, "-cpu", "qemu64,phys-bits=43,+pdpe1gb"]),
]


def without_hole(args):
    """The same command line with QEMU's default 64-bit hole."""
    out = list(args)
    i = out.index("-global")
    del out[i:i + 2]
    return out


def bar(console):
    """The GPU stand-in's BAR2 as the guest kernel lists it."""
    m = re.search(r"VPA-BAR \S+ (0x[0-9a-f]+) (0x[0-9a-f]+)", console)
    if m is None:
        return "no VPA-BAR line (guest did not finish)"
    lo, hi = int(m.group(1), 16), int(m.group(2), 16)
    if lo == 0:
        return "not assigned"
    return "%#x-%#x (%d GiB)" % (lo, hi, (hi - lo + 1) >> 30)


def boot(args):
    start = time.monotonic()
    try:
        run = subprocess.run(["nice", "-n", "10"] + args, capture_output=True,
                             timeout=300, stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        return "timeout (300 s)", 300.0
    took = time.monotonic() - start
    return bar(run.stdout.decode(errors="replace")), took


def root_bus_args(initrd, work):
    """The same BAR behind a root port on pcie.0, next to a second root
    port, under OVMF, the guest kernel told to reassign (pci=realloc)."""
    shm = os.path.join(work, "gpu-bar.shm")
    with open(shm, "wb") as f:
        f.truncate(gb.GPU_BAR)
    return [gb.QEMU, "-bios", OVMF, "-machine", "q35,accel=tcg", "-nographic", "-no-reboot",
            "-net", "none", "-kernel", gb.kernel(), "-initrd", initrd,
            "-append", "console=ttyS0 panic=-1 quiet pci=realloc", "-m", "256M",
            "-device", "pcie-root-port,id=rp1,bus=pcie.0,chassis=1",
            "-device", "pcie-root-port,id=rp2,bus=pcie.0,chassis=2",
            "-object", "memory-backend-file,id=gpubar,mem-path=%s,size=%d,share=on"
            % (shm, gb.GPU_BAR), "-device", "ivshmem-plain,memdev=gpubar,bus=rp1,addr=0x0"]


def root_bus_rows(initrd, work, hole):
    """The root-bus rows: QEMU's default hole, then the placed one."""
    args = root_bus_args(initrd, work)
    for name, extra in (("default hole", []),
                        ("<pcihole64>", ["-global", "q35-pcihost.pci-hole64-size=%sK" % hole])):
        got, took = boot(args + extra)
        print("%-8s %-24s %-13s BAR2 %s (%.0f s)" % ("OVMF", "pcie.0, pci=realloc", name,
                                                     got, took), flush=True)
    os.unlink(os.path.join(work, "gpu-bar.shm"))


def qemu_starts(hole, cpu):
    """Does QEMU accept this pci-hole64-size (it checks the CPU's
    physical address bits before any firmware runs)?"""
    args = [gb.QEMU, "-machine", "q35,accel=tcg", "-m", "256M", "-cpu", cpu,
            "-global", "q35-pcihost.pci-hole64-size=" + hole, "-S",
            "-display", "none", "-monitor", "none", "-serial", "none", "-net", "none"]
    try:
        run = subprocess.run(args, capture_output=True, text=True, timeout=3)
    except subprocess.TimeoutExpired:
        return "starts"
    return "refused: " + run.stderr.strip().splitlines()[-1]


def main():
    if len(sys.argv) != 4:
        print("usage: firmware-matrix.py CLI DATA-DIR WORK-DIR", file=sys.stderr)
        sys.exit(2)
    cli, data, work = sys.argv[1], os.path.abspath(sys.argv[2]), sys.argv[3]
    os.makedirs(work, exist_ok=True)
    initrd = os.path.join(work, "initrd.gz")
    gb.build_initramfs(initrd)
    placed = subprocess.run(
        [cli, "place", "-c", "test://" + os.path.join(data, "hosts", "dual-socket.xml"),
         "--config", os.path.join(data, "hosts", "dual-socket.conf"),
         os.path.join(data, "guest-numa", "q35-two-cells.xml")],
        capture_output=True, text=True, check=True)
    dom = ET.fromstring(placed.stdout)
    hole = dom.find("devices/controller[@index='0']/pcihole64").text
    args, _ = gb.qemu_args(dom, initrd, gb.kernel(), work)
    print("# placed <pcihole64>: %s KiB; BAR %d GiB; %s" % (hole, gb.GPU_BAR >> 30, gb.kernel()))
    for fw, knob, extra in ROWS:
        if fw == "OVMF" and not os.path.exists(OVMF):
            print("%-8s %-24s skipped: no %s (apt-get install ovmf)" % (fw, knob, OVMF))
            continue
        for name, line in (("default hole", without_hole(args)), ("<pcihole64>", args)):
            got, took = boot(line[:1] + extra + line[1:])
            print("%-8s %-24s %-13s BAR2 %s (%.0f s)" % (fw, knob, name, got, took),
                  flush=True)
    os.unlink(os.path.join(work, "gpu-bar.shm"))
    if os.path.exists(OVMF):
        root_bus_rows(initrd, work, hole)
    for hole64 in ("512G", "1T"):
        for cpu in ("qemu64", "qemu64,phys-bits=43"):
            print("QEMU     -cpu %-22s pci-hole64-size=%-5s %s"
                  % (cpu, hole64, qemu_starts(hole64, cpu)))


main()
