#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""The proving ground (TAP): the product against what a real Linux kernel
reports, in a QEMU TCG machine with two NUMA nodes over two sockets, an
IOMMU and SR-IOV NVMe controllers whose VFs the kernel creates
(tests/kernel/README.md).

Every comparison is with the guest's own sysfs, read in the guest by
guest/sysfs-facts.py (nothing of the product), and between the sources:
sysfs:/, the guest's libvirtd (qemu:///system, udev running) and a
snapshot of it.

Usage: test-kernel.py BUILD-DIR WORK-DIR
Skips (exit 77) only when QEMU cannot boot a TCG guest at all.

test-kernel.py --replay CLI DATA-DIR WORK-DIR: no machine; the committed
snapshot and facts of one run (data/kernel/) through the snapshot reader,
with the same assertions, in a second.
"""
import gzip
import json
import os
import re
import shutil
import subprocess
import sys
import time
import xml.etree.ElementTree as ET

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))
sys.path.insert(0, HERE)
import guestlib  # noqa: E402
import machine  # noqa: E402
import mkinitramfs  # noqa: E402

SPECS = {  # kernel.conf: PF -> physical network of its VFs and itself
    "0000:41:00.0": "physnet0",
    "0000:81:00.0": "physnet1",
    "0000:01:00.0": "physnet2",
}
NIC = ("8086", "10d3")
HOLDER_VF = "0000:81:00.2"
VIEWS = ("pools", "devices", "topology", "nodes", "traits")
SOURCES = ("sysfs", "libvirt", "snap")

tests = 0
failed = 0


def ok(cond, what):
    global tests, failed
    tests += 1
    failed += 0 if cond else 1
    print("%s %d %s" % ("ok" if cond else "not ok", tests, what))
    sys.stdout.flush()
    return cond


def same(got, want, what):
    """ok(got == want), with both printed when they differ."""
    if isinstance(got, dict):
        got, want = ({str(k): v for k, v in x.items()} if isinstance(x, dict) else x
                     for x in (got, want))
    if not ok(got == want, what):
        print("#   got:  %s" % json.dumps(got, sort_keys=True, default=str)[:2000])
        print("#   want: %s" % json.dumps(want, sort_keys=True, default=str)[:2000])


class Results:
    """What a scenario left in its /vpa-out."""

    def __init__(self, out):
        self.out = out

    def text(self, name, ext="out"):
        path = os.path.join(self.out, "%s.%s" % (name, ext))
        return open(path).read() if os.path.exists(path) else None

    def rc(self, name):
        t = self.text(name, "rc")
        return int(t) if t is not None else None

    def json(self, name):
        try:
            return json.loads(self.text(name) or "null")
        except ValueError:
            return None

    def list(self, name, key):
        """The list KEY of NAME's JSON, empty when it has none."""
        doc = self.json(name)
        return doc.get(key, []) if isinstance(doc, dict) else []


# What the product should say, computed from the kernel's facts alone.

def socket_of(facts):
    return {n["node"]: n["sockets"][0] for n in facts["nodes"]}


def expected_devices(facts):
    socket = socket_of(facts)
    out = []
    for d in facts["devices"]:
        pf = d["address"] if d["sriov_totalvfs"] else d["physfn"]
        if pf in SPECS and (d["vendor"], d["device"]) == ("1b36", "0010"):
            tags = {"physical_network": SPECS[pf]}
        elif (d["vendor"], d["device"]) == NIC:
            tags = {}
        else:
            continue
        node = d["numa_node"] if d["numa_node"] >= 0 else None
        out.append({
            "address": d["address"], "vendor_id": d["vendor"], "product_id": d["device"],
            "dev_type": ("type-VF" if d["physfn"] else
                         "type-PF" if d["sriov_totalvfs"] else "type-PCI"),
            "numa_node": node, "socket": socket.get(node), "pf": d["physfn"], "tags": tags,
        })
    return out


def with_claims(devs, held):
    """State of each device when the VFs in HELD (address -> domain) are used."""
    out = []
    for d in devs:
        d = dict(d)
        kids = [a for a in held if any(x["address"] == a and x["pf"] == d["address"]
                                       for x in devs)]
        if d["address"] in held:
            d.update(state="used", domain=held[d["address"]], blocked_by=None)
        elif kids:
            d.update(state="blocked", domain=None,
                     blocked_by={"address": kids[0], "domain": held[kids[0]]})
        else:
            d.update(state="free", domain=None, blocked_by=None)
        d["reservation"] = None  # no reservations on the replayed host
        out.append(d)
    return out


def expected_pools(devs):
    pools = {}
    for d in devs:
        key = (d["vendor_id"], d["product_id"], d["numa_node"] if d["numa_node"] is not None
               else -1, d["dev_type"], json.dumps(d["tags"], sort_keys=True))
        p = pools.setdefault(key, {"total": 0, "free": 0, "used": 0, "blocked": 0})
        p["total"] += 1
        p[d["state"]] += 1
    return pools


def pools_by_key(doc):
    return {(p["vendor_id"], p["product_id"], p["numa_node"] if p["numa_node"] is not None
             else -1, p["dev_type"], json.dumps(p["tags"], sort_keys=True)):
            {k: p[k] for k in ("total", "free", "used", "blocked")}
            for p in (doc or {}).get("pools", [])}


def distance(a, b):
    """nvidia-smi's class of the path between two devices' facts."""
    if a["address"] == b["address"]:
        return "X"
    if a["host_bridge"] == b["host_bridge"]:
        shared = 0
        for x, y in zip(a["upstream"], b["upstream"]):
            if x != y:
                break
            shared += 1
        return "PIX" if shared and len(a["upstream"]) - shared <= 1 else \
            "PXB" if shared else "PHB"
    if a["numa_node"] >= 0 and a["numa_node"] == b["numa_node"]:
        return "NODE"
    return "SYS"


def cpulist(cpus):
    return sorted(cpus)


def parse_cpulist(text):
    out = []
    for part in (text or "").split(","):
        if part and part != "-":
            lo, _, hi = part.partition("-")
            out += range(int(lo), int(hi or lo) + 1)
    return out


def check_facts(facts):
    """The proving ground is what it claims to be (else nothing below means much)."""
    nodes = facts["nodes"]
    same([(n["node"], n["sockets"]) for n in nodes], [(0, [0]), (1, [1])],
         "kernel: two NUMA nodes on two sockets")
    byaddr = {d["address"]: d for d in facts["devices"]}
    same({pf: (byaddr[pf]["numa_node"], len(byaddr[pf]["virtfns"])) for pf in SPECS if pf in byaddr},
         {"0000:41:00.0": (0, 4), "0000:81:00.0": (1, 4), "0000:01:00.0": (-1, 4)},
         "kernel: SR-IOV PFs on node 0, node 1 and without a node, 4 VFs each")
    vfs = [d for d in facts["devices"] if d["physfn"]]
    groups = [d["iommu_group"] for d in vfs]
    ok(len(vfs) == 12 and len(set(groups)) == 12 and min(groups) >= 0,
       "kernel: every VF in an IOMMU group of its own (%s)" % groups)
    same(sorted(d["driver"] for d in vfs if d["driver"]), ["vfio-pci", "vfio-pci"],
         "kernel: two VFs on vfio-pci, the others unbound")
    ok(all(byaddr[d["physfn"]]["numa_node"] == d["numa_node"] for d in vfs),
       "kernel: every VF reads its PF's numa_node")


def check_views(res, facts, sources=SOURCES):
    """Each source's views against the facts, and the sources alike."""
    devs = with_claims(expected_devices(facts), {HOLDER_VF: "holder"})
    byaddr = {d["address"]: d for d in facts["devices"]}
    socket = socket_of(facts)
    for src in sources:
        for v in VIEWS:
            ok(res.rc("%s-%s" % (src, v)) == 0 and res.json("%s-%s" % (src, v)) is not None,
               "%s: %s exits 0 with JSON (%s)" % (src, v,
                                                 (res.text("%s-%s" % (src, v), "err") or "").strip()[:200]))
        same(sorted(res.list(src + "-devices", "devices"), key=lambda d: d["address"]),
             sorted(devs, key=lambda d: d["address"]),
             "%s: devices are the kernel's (addresses, ids, PF/VF links, NUMA nodes "
             "including none, sockets, tags, the held VF and its blocked PF)" % src)
        same(pools_by_key(res.json(src + "-pools")), expected_pools(devs),
             "%s: pools are the kernel's devices grouped" % src)
        topo = res.json(src + "-topology") or {"devices": [], "matrix": []}
        want = [d for d in facts["devices"] if d["address"] in {x["address"] for x in devs}
                and not d["physfn"]]
        got = {t["address"]: t for t in topo["devices"]}
        same(sorted(got), sorted(d["address"] for d in want),
             "%s: topology lists the PFs and plain devices" % src)
        same({a: (t["numa_node"], parse_cpulist(t["cpus"]), t["pcie_root"], t["root_port"],
                  t["netdev"]) for a, t in got.items()},
             {d["address"]: (d["numa_node"] if d["numa_node"] >= 0 else None,
                             cpulist(next((n["cpus"] for n in facts["nodes"]
                                           if n["node"] == d["numa_node"]), [])),
                             d["host_bridge"], d["upstream"][0] if d["upstream"] else None,
                             d["net"][0] if d["net"] else None) for d in want},
             "%s: topology's node, CPUs, host bridge, root port and netdev per device" % src)
        order = [t["address"] for t in topo["devices"]]
        same(topo["matrix"], [[distance(byaddr[a], byaddr[b]) for b in order] for a in order],
             "%s: topology's distance matrix from the kernel's PCIe tree" % src)
        same([(n["node"], n["socket"], n["cpus"], n["memory_kib"])
              for n in res.list(src + "-nodes", "nodes")],
             [(n["node"], socket[n["node"]], len(n["cpus"]), n["memory_kib"])
              for n in facts["nodes"]],
             "%s: nodes (ids, sockets, CPU counts, memory) are the kernel's" % src)
        ok("COMPUTE_SOCKET_PCI_NUMA_AFFINITY" in res.list(src + "-traits", "traits"),
           "%s: two sockets give COMPUTE_SOCKET_PCI_NUMA_AFFINITY" % src)
    for v in VIEWS if len(sources) > 1 else ():
        ok(res.text("sysfs-" + v) == res.text("libvirt-" + v) == res.text("snap-" + v),
           "%s: sysfs:/, qemu:///system and its snapshot print the same bytes" % v)


def snapshot_devices(text):
    out = {}
    for dev in ET.fromstring(text).findall("device"):
        cap = dev.find("capability[@type='pci']")
        if cap is None:
            continue
        addr = "%04x:%02x:%02x.%x" % tuple(int(cap.find(k).text, 0) for k in
                                         ("domain", "bus", "slot", "function"))
        grp = cap.find("iommuGroup")
        numa = cap.find("numa")
        pf = cap.find("capability[@type='phys_function']/address")
        vfs = cap.findall("capability[@type='virt_functions']/address")
        fmt = lambda a: "%04x:%02x:%02x.%x" % tuple(int(a.get(k), 16) for k in
                                                   ("domain", "bus", "slot", "function"))
        out[addr] = {
            "class": "0x%06x" % int(cap.find("class").text, 0),
            "driver": dev.findtext("driver/name"),
            "iommu_group": int(grp.get("number")) if grp is not None else -1,
            "numa_node": int(numa.get("node")) if numa is not None else -1,
            "physfn": fmt(pf) if pf is not None else None,
            "virtfns": sorted(fmt(a) for a in vfs),
        }
    return out


def check_snapshots(res, facts, sources=("sysfs", "libvirt")):
    """Drivers, IOMMU groups, classes, links as the snapshots write them."""
    want = {d["address"]: {"class": d["class"], "driver": d["driver"],
                           "iommu_group": d["iommu_group"], "numa_node": d["numa_node"],
                           "physfn": d["physfn"], "virtfns": d["virtfns"]}
            for d in facts["devices"]}
    for src in sources:
        text = res.text(src + "-snapshot")
        ok(res.rc(src + "-snapshot") == 0 and text is not None, "%s: snapshot exits 0" % src)
        same(snapshot_devices(text or "<node/>"), want,
             "%s: snapshot's class, driver, IOMMU group, NUMA node, PF and VF links "
             "of every PCI device are the kernel's" % src)


def check_live(res):
    """Item 2: node 1's PF 4 -> 0 -> 2 VFs; every view follows at once."""
    for n in (4, 0, 2):
        facts = res.json("facts-%d" % n) or {"devices": [], "nodes": []}
        vfs = len([d for d in facts["devices"] if d["physfn"] == "0000:81:00.0"])
        ok(vfs == n, "numvfs %d: the kernel lists %d VFs of 0000:81:00.0" % (n, vfs))
        held = {HOLDER_VF: "holder"} if n in (4, 2) else {}
        devs = with_claims(expected_devices(facts), held)
        for src in ("sysfs", "libvirt"):
            tag = "%s-%d" % (src, n)
            same(sorted(res.list(tag + "-devices", "devices"), key=lambda d: d["address"]),
                 sorted(devs, key=lambda d: d["address"]),
                 "numvfs %d, %s: devices follow the kernel at once%s"
                 % (n, src, ", the held VF reported used by 'holder'" if held else ""))
            same(pools_by_key(res.json(tag + "-pools")), expected_pools(devs),
                 "numvfs %d, %s: pools follow the kernel at once" % (n, src))
            err = (res.text(tag + "-check", "err") or "").strip()
            if held:
                ok(res.rc(tag + "-check") == 0 and err == "",
                   "numvfs %d, %s: check passes 'holder' (%s)" % (n, src, err))
            else:
                ok(res.rc(tag + "-check") == 1 and len(err.splitlines()) == 1
                   and "holder" in err and HOLDER_VF in (res.text(tag + "-check") or ""),
                   "numvfs 0, %s: check refuses 'holder' whose VF is gone, in one line: %s"
                   % (src, err))
        fleet = (res.json("fleet-%d-pools" % n) or {}).get("pools", [])
        ok(res.rc("fleet-%d-sync" % n) == 0 and all(p.pop("host") == "kernel" for p in fleet)
           and {"pools": fleet} == res.json("libvirt-%d-pools" % n),
           "numvfs %d: fleet sync, then fleet pools --host is the live pools" % n)


NESTED_INIT = """#!/bin/busybox sh
/bin/busybox mkdir -p /proc /sys
/bin/busybox mount -t proc proc /proc
/bin/busybox mount -t sysfs sysfs /sys
for d in /sys/bus/pci/devices/*; do
  echo "VPA-PCI ${d##*/} $(/bin/busybox cat $d/vendor) $(/bin/busybox cat $d/device) $(/bin/busybox cat $d/numa_node)"
done
echo VPA-DONE
/bin/busybox sleep 100000
"""


def nested_initrd(path):
    """The nested guest's initramfs: lists its PCI devices, then waits."""
    arc = guestlib.newc_entry("bin", b"", 0o040755)
    arc += guestlib.newc_entry("bin/busybox", guestlib.busybox(), 0o100755)
    arc += guestlib.newc_entry("init", NESTED_INIT.encode(), 0o100755)
    arc += guestlib.newc_entry("TRAILER!!!", b"", 0)
    with gzip.open(path, "wb", compresslevel=1) as f:
        f.write(arc)


def one_line(text):
    return (text or "").strip().replace("\n", " | ")[:400]


def check_start(res):
    """Placement and the hook on a real start (guest/start.sh)."""
    facts = res.json("facts") or {"devices": []}
    byaddr = {d["address"]: d for d in facts["devices"]}
    vf = (res.text("vf") or "").strip()
    ok(res.rc("define-vm1") == 0, "define: vm1 placed and defined (%s)"
       % one_line(res.text("define-vm1", "err")))
    dev = byaddr.get(vf, {})
    ok(dev.get("physfn") == "0000:81:00.0" and dev.get("numa_node") == 1,
       "define: vm1 (bound to node 1, policy required) got a VF of node 1: %s" % vf)
    started = res.rc("start-vm1") == 0
    ok(started, "virsh start vm1 with the VF passes the hook and starts (%s)"
       % one_line(res.text("start-vm1", "err")))
    ok((res.text("vf-driver") or "").strip().endswith("/vfio-pci"),
       "libvirt bound %s to vfio-pci (%s)" % (vf, (res.text("vf-driver") or "").strip()))
    cmd = res.text("qemu-cmdline") or ""
    ok(vf != "" and ('"driver":"vfio-pci","host":"%s"' % vf in cmd
                     or "vfio-pci,host=%s" % vf in cmd),
       "vm1's QEMU has %s as a vfio-pci device on its command line" % vf)
    group = os.path.basename((res.text("vf-group") or "").strip())
    ok(group != "" and ("/dev/vfio/" + group) in (res.text("qemu-fds") or "").split(),
       "vm1's QEMU holds /dev/vfio/%s, the VF's IOMMU group" % group)
    ok(res.rc("check-vm1") == 0 and vf in (res.text("check-vm1") or ""),
       "check vm1 (running) passes: %s" % one_line(res.text("check-vm1")))
    for dom, why in (("vm2", "bound to node 0, its VF on node 1 under required"),
                     ("vm3", "asking for the VF vm1 holds")):
        err = res.text("start-" + dom, "err") or ""
        ours = [ln for ln in err.splitlines() if "virt-pci-affinity" in ln]
        ok(res.rc("define-" + dom) == 0 and res.rc("start-" + dom) != 0 and len(ours) == 1
           and len(ours[0]) < 1000,
           "virsh start %s (%s): the hook refuses, one line: %s" % (dom, why, one_line(err)))
    ok("vm1" in (res.text("start-vm3", "err") or ""),
       "vm3's refusal names vm1, read from its live state file")
    for line in re.findall(r"VPA-PCI .*", res.text("vm1", "console") or ""):
        print("# nested guest: " + line)


def live_cell(res, name):
    doc = res.json(name) or {}
    cells = doc.get("cells") or [{}]
    cell = cells[0]
    nodes = {int(k): v for k, v in (cell.get("nodes") or {}).items()}
    return doc, cell, nodes


def check_running_truth(res):
    """check --live on vm1: its memory on node 1, then moved (start.sh)."""
    doc, cell, nodes = live_cell(res, "live-vm1")
    resident = cell.get("resident", 0)
    ok(res.rc("live-vm1") == 0 and cell.get("bound") == [1] and resident > 0
       and nodes.get(1, 0) * 10 >= resident * 9,
       "check --live vm1: cell 0 bound to node 1 has %s of %s resident sampled pages on "
       "node 1 (%s)" % (nodes.get(1, 0), resident, one_line(res.text("live-vm1", "err"))))
    ok(doc.get("devices") == [1], "check --live vm1: its VF is on node 1: %s" % doc.get("devices"))
    vcpus = cell.get("vcpus") or []
    ok(len(vcpus) >= 1 and all(v.get("node") in (0, 1) for v in vcpus),
       "check --live vm1: where its vCPU thread last ran: %s" % vcpus)
    om = res.text("live-metrics") or ""
    ok(res.rc("live-metrics") == 0 and 'virt_pci_affinity_live_cell_off_node{domain="vm1",cell="0"} 0' in om
       and om.endswith("# EOF\n"), "check --live --format openmetrics: vm1's cell 0 on node")
    doc, cell, nodes = live_cell(res, "live-pinned")
    ok(res.rc("migrate-vm1") == 0 and res.rc("live-pinned") == 0
       and nodes.get(1, 0) == cell.get("resident", -1),
       "migratepages 1 0 moves none of vm1's memory (VFIO pinned it for the VF): still %s of "
       "%s on node 1" % (nodes.get(1, 0), cell.get("resident", 0)))
    doc, cell, nodes = live_cell(res, "live-vm4")
    ok(res.rc("start-vm4") == 0 and res.rc("live-vm4") == 0 and cell.get("resident", 0) > 0
       and nodes.get(1, 0) * 10 >= cell.get("resident", 0) * 9,
       "check --live vm4 (no VF, bound to node 1): %s of %s on node 1 (%s)"
       % (nodes.get(1, 0), cell.get("resident", 0),
          one_line((res.text("start-vm4", "err") or "") + (res.text("live-vm4", "err") or ""))))
    doc, cell, nodes = live_cell(res, "live-moved-json")
    err = (res.text("live-moved", "err") or "").strip()
    ok(res.rc("migrate-vm4") == 0 and res.rc("live-moved") == 1
       and res.rc("live-moved-json") == 1 and cell.get("ok") is False
       and nodes.get(0, 0) * 2 > cell.get("resident", 0) and len(err.splitlines()) == 1
       and "domain 'vm4': cell 0:" in err and "off bound node 1" in err,
       "after migratepages 1 0, check --live refuses vm4, one line: %s; node 0 holds %s of %s"
       % (err, nodes.get(0, 0), cell.get("resident", 0)))
    print("# check --live vm4 after the move: " + one_line(res.text("live-moved")))


def check_speed(res):
    """The hook and pools timed in the guest (start.sh, bench/run's way)."""
    bench = res.json("bench") or {}
    ok(res.rc("bench") == 0 and all(k in bench for k in ("cat", "hook", "xmllint", "pools")),
       "the hook's prepare begin, pools, vpa-bench-cat and xmllint timed in the guest (%s)"
       % one_line(res.text("bench", "err")))
    for name in ("cat", "hook", "xmllint", "pools"):
        ns = sorted((bench.get(name) or {}).get("wall_ns") or [0])
        rss = max((bench.get(name) or {}).get("maxrss_kib") or [0])
        print("# speed: %-8s median %.0f ms, min %.0f ms, peak RSS %d KiB"
              % (name, ns[len(ns) // 2] / 1e6, ns[0] / 1e6, rss))


def boot(initrd, work, build, scenario, timeout):
    out = os.path.join(work, scenario)
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(out)
    nested_initrd(os.path.join(out, "nested-initrd.gz"))
    console, took, late = machine.boot(initrd, out, os.path.join(HERE, "guest", scenario + ".sh"),
                                       timeout, build=build)
    with open(os.path.join(work, scenario + ".console"), "w") as f:
        f.write(console)
    for line in re.findall(r"^VPA-STEP .*$", console, re.M):
        print("# " + line)
    print("# %s: machine ran %.1f s" % (scenario, took))
    if late or "VPA-DONE" not in console:
        tail = [ln for ln in console.splitlines() if ln.strip()][-15:]
        print("# " + "\n# ".join(tail))
    return Results(out), took, late


def replay(cli, data, work):
    """The proving ground's libvirtd snapshot and sysfs facts (data/kernel/,
    committed from a run of the suite) through the snapshot reader: what the
    real kernel showed, kept by a fast test."""
    out = os.path.join(work, "replay")
    os.makedirs(out, exist_ok=True)
    data = os.path.abspath(data)
    host = os.path.join(data, "kernel", "host.xml")
    conf = os.path.join(data, "kernel", "kernel.conf")
    for v in VIEWS:
        with open(os.path.join(out, "snap-%s.out" % v), "w") as o, \
                open(os.path.join(out, "snap-%s.err" % v), "w") as e:
            rc = subprocess.run([cli, v, "-c", "test://" + host, "--config", conf,
                                 "--format", "json"], stdout=o, stderr=e).returncode
        with open(os.path.join(out, "snap-%s.rc" % v), "w") as f:
            f.write("%d\n" % rc)
    shutil.copy(host, os.path.join(out, "libvirt-snapshot.out"))
    with open(os.path.join(out, "libvirt-snapshot.rc"), "w") as f:
        f.write("0\n")
    res = Results(out)
    facts = json.load(open(os.path.join(data, "kernel", "facts.json")))
    check_facts(facts)
    check_views(res, facts, ("snap",))
    check_snapshots(res, facts, ("libvirt",))
    print("1..%d" % tests)
    sys.exit(1 if failed else 0)


def main():
    if len(sys.argv) == 5 and sys.argv[1] == "--replay":
        replay(*sys.argv[2:])
    if len(sys.argv) != 3:
        sys.exit("usage: test-kernel.py BUILD-DIR WORK-DIR | --replay CLI DATA-DIR WORK-DIR")
    build, work = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    why = machine.accel_usable()
    if why is None:
        try:
            guestlib.kernel()
            guestlib.busybox()
        except guestlib.Missing as e:
            why = str(e)
    if why is not None:
        print("1..0 # SKIP %s" % why)
        sys.exit(77)
    os.makedirs(work, exist_ok=True)
    initrd = os.path.join(work, "initrd.gz")
    mkinitramfs.build(initrd, guestlib.kernel_release())
    start = time.monotonic()
    res, took, late = boot(initrd, work, build, "sources", 600)
    ok(not late and res.rc("facts") == 0, "sources: the machine booted, ran its scenario, "
       "powered off (%.0f s)" % took)
    facts = res.json("facts")
    if facts is None:
        print("Bail out! the guest left no sysfs facts (console: %s)"
              % os.path.join(work, "sources.console"))
        sys.exit(1)
    check_facts(facts)
    ok(res.rc("define") == 0, "libvirtd defined 'holder' (%s)"
       % (res.text("define", "err") or "").strip())
    check_views(res, facts)
    check_snapshots(res, facts)
    check_live(res)
    res, took, late = boot(initrd, work, build, "start", 600)
    ok(not late and res.rc("facts") == 0, "start: the machine booted, ran its scenario, "
       "powered off (%.0f s)" % took)
    check_start(res)
    check_running_truth(res)
    check_speed(res)
    print("# all machines: %.0f s" % (time.monotonic() - start))
    print("1..%d" % tests)
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
