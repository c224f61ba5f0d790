#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Reads what the guest kernel says about its PCI devices and NUMA nodes,
straight from /sys, with nothing of the product: the facts the test
compares every product output with. Prints JSON."""
import glob
import json
import os

SYS = "/sys"


def read(path, default=None):
    try:
        with open(path) as f:
            return f.read().strip()
    except OSError:
        return default


def link_base(path):
    try:
        return os.path.basename(os.readlink(path))
    except OSError:
        return None


def device(path):
    addr = os.path.basename(path)
    real = os.path.realpath(path)
    # /sys/devices/pci0000:40/0000:40:00.0/0000:41:00.0: the host bridge,
    # then every bridge above the device.
    chain = real.split("/")[3:]
    virtfns = sorted(link_base(p) for p in glob.glob(os.path.join(path, "virtfn*")))
    return {
        "address": addr,
        "vendor": read(path + "/vendor")[2:],
        "device": read(path + "/device")[2:],
        "class": read(path + "/class"),
        "numa_node": int(read(path + "/numa_node", "-1")),
        "physfn": link_base(path + "/physfn"),
        "virtfns": virtfns,
        "sriov_totalvfs": int(read(path + "/sriov_totalvfs", "0")),
        "sriov_numvfs": int(read(path + "/sriov_numvfs", "0")),
        "driver": link_base(path + "/driver"),
        "iommu_group": int(link_base(path + "/iommu_group") or -1),
        "net": sorted(os.listdir(path + "/net")) if os.path.isdir(path + "/net") else [],
        "host_bridge": chain[0],
        "upstream": chain[1:-1],
    }


def nodes():
    out = []
    for n in sorted(glob.glob(SYS + "/devices/system/node/node[0-9]*"),
                    key=lambda p: int(p.rsplit("node", 1)[1])):
        cpus = []
        for part in read(n + "/cpulist").split(","):
            lo, _, hi = part.partition("-")
            cpus += range(int(lo), int(hi or lo) + 1)
        mem = [ln for ln in read(n + "/meminfo").splitlines() if "MemTotal:" in ln]
        pkgs = {read("%s/devices/system/cpu/cpu%d/topology/physical_package_id" % (SYS, c))
                for c in cpus}
        out.append({"node": int(n.rsplit("node", 1)[1]), "cpus": cpus,
                    "memory_kib": int(mem[0].split()[-2]),
                    "sockets": sorted(int(p) for p in pkgs)})
    return out


print(json.dumps({
    "devices": [device(p) for p in sorted(glob.glob(SYS + "/bus/pci/devices/*"))],
    "nodes": nodes(),
}, indent=1))
