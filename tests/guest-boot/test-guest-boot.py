#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""A real guest sees the NUMA node we gave its devices (TAP).

Places data/guest-numa/q35-two-cells.xml and pc-two-cells.xml on the
dual-socket sample host with the built CLI (a GPU on host node 1 -> guest cell 1, a QAT and a VF
on host node 0 -> guest cell 0), then boots a minimal Linux guest under
QEMU TCG with the machine, the NUMA cells and the PCI controllers of
that output: every pcie-expander-bus becomes a pxb-pcie (every
pci-expander-bus a pxb) with its busNr and numa_node, every
pcie-root-port a pcie-root-port at its index and slot. There is no VF to pass through, so each device's guest slot gets
an emulated PCIe device of a model of its own (told apart by vendor and
device id). The guest (Debian's kernel, a busybox initramfs built here)
prints every /sys/bus/pci/devices/*/numa_node on its serial console and
powers off; each device must read the <node> of the expander its root
port sits on. The GPU's stand-in is an ivshmem-plain whose 64-bit BAR2
is the sample GPU's 128 GiB (a sparse memory backend file), QEMU's host
bridge gets the placed <pcihole64> as its pci-hole64-size, and the
guest must enumerate the BAR with its 128 GiB assigned behind the
expander.

Usage: test-guest-boot.py CLI DATA-DIR WORK-DIR
Skips only when QEMU has no TCG accelerator.
"""
import gzip
import os
import re
import subprocess
import sys
import time
import xml.etree.ElementTree as ET

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import guestlib  # noqa: E402

QEMU = guestlib.QEMU
# (QEMU model, vendor, device ids): distinct ids, all fine behind a root
# port or on a PCI bus; a virtio device is "modern" (0x104N) behind a PCIe
# port and "transitional" (0x100N) on a conventional PCI bus.
MODELS = [
    ("virtio-net-pci", "0x1af4", ("0x1041", "0x1000")),
    ("e1000e", "0x8086", ("0x10d3",)),
    ("virtio-rng-pci", "0x1af4", ("0x1044", "0x1005")),
    ("virtio-balloon-pci", "0x1af4", ("0x1045", "0x1002")),
]
INIT = """#!/bin/busybox sh
/bin/busybox mkdir -p /proc /sys
/bin/busybox mount -t proc proc /proc
/bin/busybox mount -t sysfs sysfs /sys
for d in /sys/bus/pci/devices/*; do
  echo "VPA-PCI ${d##*/} $(/bin/busybox cat $d/vendor) $(/bin/busybox cat $d/device) $(/bin/busybox cat $d/numa_node)"
done
for d in /sys/bus/pci/devices/*; do
  [ "$(/bin/busybox cat $d/device)" = "0x1110" ] && echo "VPA-BAR ${d##*/} $(/bin/busybox sed -n 3p $d/resource)"
done
echo VPA-DONE
/bin/busybox poweroff -f
"""

# The sample GPU's 64-bit BAR (data/hosts/dual-socket.json), stood in
# for by ivshmem-plain, whose BAR2 is its memory backend's size.
GPU_MODEL = ("ivshmem-plain", "0x1af4", ("0x1110",))
GPU_BAR = 128 << 30

tests = 0


def ok(cond, what):
    global tests
    tests += 1
    print("%s %d %s" % ("ok" if cond else "not ok", tests, what))
    return cond


def bail(msg):
    print("Bail out! " + msg)
    sys.exit(1)


def num(s):
    return int(s, 0)


def build_initramfs(path):
    try:
        blob = guestlib.busybox()
    except guestlib.Missing as e:
        bail(str(e))
    arc = b""
    arc += guestlib.newc_entry("bin", b"", 0o040755)
    arc += guestlib.newc_entry("bin/busybox", blob, 0o100755)
    arc += guestlib.newc_entry("init", INIT.encode(), 0o100755)
    arc += guestlib.newc_entry("TRAILER!!!", b"", 0)
    with gzip.open(path, "wb", compresslevel=1) as f:
        f.write(arc)


def kernel():
    try:
        return guestlib.kernel()
    except guestlib.Missing as e:
        bail(str(e))


def qemu_args(dom, initrd, kern, work):
    """The guest of the placed XML: machine, cells, controllers, devices."""
    machine = dom.find("os/type").get("machine")
    root = "pcie.0" if machine.startswith(("q35", "pc-q35")) else "pci.0"
    args = [QEMU, "-machine", machine + ",accel=tcg", "-nographic", "-no-reboot",
            "-net", "none", "-kernel", kern, "-initrd", initrd,
            "-append", "console=ttyS0 panic=-1 quiet"]
    hole = dom.find("devices/controller[@index='0']/pcihole64")
    if hole is not None:
        assert hole.get("unit", "KiB") == "KiB", "pcihole64 in %s" % hole.get("unit")
        args += ["-global", "%s.pci-hole64-size=%sK"
                 % ("q35-pcihost" if root == "pcie.0" else "i440FX-pcihost", hole.text)]
    cells = dom.findall("cpu/numa/cell")
    ncpu = int(dom.find("vcpu").text)
    args += ["-smp", str(ncpu), "-m", "%dM" % (128 * len(cells))]
    for c in cells:
        cid = c.get("id")
        args += ["-object", "memory-backend-ram,id=m%s,size=128M" % cid,
                 "-numa", "node,nodeid=%s,cpus=%s,memdev=m%s" % (cid, c.get("cpus"), cid)]
    ctrls = [c for c in dom.findall("devices/controller") if c.get("type") == "pci"]
    nodes = {}
    parents = {}
    for c in sorted(ctrls, key=lambda c: int(c.get("index"))):
        idx = int(c.get("index"))
        model = c.get("model")
        addr = c.find("address")
        if idx == 0:
            continue
        if model in ("pcie-expander-bus", "pci-expander-bus"):
            t = c.find("target")
            nodes[idx] = int(t.find("node").text)
            args += ["-device", "%s,id=pci.%d,bus_nr=%d,numa_node=%d,bus=%s"
                     % ("pxb-pcie" if model == "pcie-expander-bus" else "pxb", idx,
                        num(t.get("busNr")), nodes[idx],
                        "pcie.0" if model == "pcie-expander-bus" else "pci.0")]
        elif model == "pcie-root-port":
            bus = root if addr is None else "pci.%d" % num(addr.get("bus"))
            parents[idx] = None if addr is None else num(addr.get("bus"))
            dev = "pcie-root-port,id=pci.%d,bus=%s,chassis=%d" % (idx, bus, idx)
            if addr is not None:
                dev += ",addr=0x%x" % num(addr.get("slot"))
            args += ["-device", dev]
        else:
            bail("controller model %s is not modelled by this test" % model)
    expect = []
    devs = [d for d in dom.find("devices") if d.tag in ("hostdev", "interface")]
    for i, d in enumerate(devs):
        addr = d.find("address")
        if addr is None or addr.get("type") != "pci":
            continue
        bus = num(addr.get("bus"))
        model, vendor, device = MODELS[i % len(MODELS)]
        where = "bus=pci.%d,addr=0x%x" % (bus, num(addr.get("slot")))
        if d.find("alias").get("name").startswith("ua-vpa-GPU"):
            # The GPU's stand-in has its 128 GiB 64-bit BAR: ivshmem-plain
            # on a sparse file (BAR2 is the file's size).
            model, vendor, device = GPU_MODEL
            shm = os.path.join(work, "gpu-bar.shm")
            with open(shm, "wb") as f:
                f.truncate(GPU_BAR)
            args += ["-object", "memory-backend-file,id=gpubar,mem-path=%s,size=%d,share=on"
                     % (shm, GPU_BAR), "-device", "ivshmem-plain,memdev=gpubar," + where]
        else:
            args += ["-device", "%s,%s" % (model, where)]
        node = nodes.get(parents.get(bus), nodes.get(bus, -1))
        expect.append((d.find("alias").get("name"), model, vendor, device, node))
    return args, expect


def check_gpu_bar(case, dom, console):
    """The placed XML sizes the 64-bit hole for the GPU's BAR, and the
    guest enumerates the stand-in with its 128 GiB BAR assigned."""
    hole = dom.find("devices/controller[@index='0']/pcihole64")
    kib = int(hole.text) if hole is not None else 0
    ok(kib * 1024 >= GPU_BAR, "%s: <pcihole64> holds the GPU's 128 GiB BAR (%d KiB)" % (case, kib))
    bars = re.findall(r"VPA-BAR (\S+) (0x[0-9a-f]+) (0x[0-9a-f]+) (0x[0-9a-f]+)", console)
    size = [int(b[2], 16) - int(b[1], 16) + 1 if int(b[1], 16) else 0 for b in bars]
    for b in bars:
        print("# guest: %s BAR2 %s-%s flags %s" % b)
    ok(size == [GPU_BAR], "%s: the guest maps the GPU stand-in's 64-bit BAR behind its "
       "expander (sizes %s)" % (case, size))


def main():
    if len(sys.argv) != 4:
        bail("usage: test-guest-boot.py CLI DATA-DIR WORK-DIR")
    cli, data, work = sys.argv[1], os.path.abspath(sys.argv[2]), sys.argv[3]
    accel = subprocess.run([QEMU, "-accel", "help"], capture_output=True, text=True)
    if accel.returncode != 0 or "tcg" not in accel.stdout:
        print("1..0 # SKIP %s has no TCG accelerator" % QEMU)
        return
    os.makedirs(work, exist_ok=True)
    initrd = os.path.join(work, "initrd.gz")
    build_initramfs(initrd)
    for case in ("q35-two-cells", "pc-two-cells"):
        boot(cli, data, case, initrd)
    print("1..%d" % tests)


def boot(cli, data, case, initrd):
    domain = os.path.join(data, "guest-numa", case + ".xml")
    placed = subprocess.run(
        [cli, "place", "-c", "test://" + os.path.join(data, "hosts", "dual-socket.xml"),
         "--config", os.path.join(data, "hosts", "dual-socket.conf"), domain],
        capture_output=True, text=True)
    if placed.returncode != 0:
        bail("place failed: " + placed.stderr.strip())
    golden = open(os.path.join(data, "guest-numa", case + ".out.xml")).read()
    ok(placed.stdout == golden, "%s: place gives the golden layout (%s.out.xml)" % (case, case))
    dom = ET.fromstring(placed.stdout)
    work = os.path.dirname(initrd)
    args, expect = qemu_args(dom, initrd, kernel(), work)
    ok(sorted({e[4] for e in expect}) == [0, 1], "%s: devices on both guest cells: %s"
       % (case, ", ".join("%s->%d" % (e[0], e[4]) for e in expect)))
    print("# " + " ".join(args))
    start = time.monotonic()
    try:
        run = subprocess.run(args, capture_output=True, timeout=120, stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        bail("the guest did not power off within 120 s")
    took = time.monotonic() - start
    console = run.stdout.decode(errors="replace")
    print("# %s: guest boot took %.1f s" % (case, took))
    ok("VPA-DONE" in console, "%s: the guest booted and listed its PCI devices (%.1f s)"
       % (case, took))
    seen = re.findall(r"VPA-PCI (\S+) (0x[0-9a-f]{4}) (0x[0-9a-f]{4}) (-?\d+)", console)
    for line in seen:
        print("# guest: %s %s:%s numa_node %s" % line)
    for alias, model, vendor, device, node in expect:
        got = [int(s[3]) for s in seen if s[1] == vendor and s[2] in device]
        ok(got == [node], "%s: %s (as %s %s) reads numa_node %d in the guest (got %s)"
           % (case, alias, model, vendor, node, got))
    check_gpu_bar(case, dom, console)
    shm = os.path.join(work, "gpu-bar.shm")
    if os.path.exists(shm):
        os.unlink(shm)
    if run.returncode != 0:
        print("# qemu exit status %d; stderr: %s"
              % (run.returncode, run.stderr.decode(errors="replace")[-500:]))


if __name__ == "__main__":
    main()
