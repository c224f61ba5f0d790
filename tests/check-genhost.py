#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Checks tools/vpa-genhost and the samples in data/ (TAP output).

* every data/hosts/NAME.json regenerates NAME.xml byte for byte, and
  NAME.sysfs/ file for file when that tree is committed;
* the sysfs tree and the snapshot describe the same devices and topology;
* libvirt's test driver loads each snapshot with the same PCI devices,
  the same device XML (less <driver>, which it does not keep) and domains;
* each NAME.conf only names devices the host has;
* data/domains/*.xml are libvirt domains once their sources are filled in;
* benchmark hosts are deterministic and consistent; bad input is refused.

usage: check-genhost.py [SOURCE_ROOT]
"""

import configparser
import ctypes
import ctypes.util
import fnmatch
import glob
import os
import re
import shutil
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

SRC = os.path.abspath(sys.argv[1] if len(sys.argv) > 1
                      else os.path.join(os.path.dirname(__file__), ".."))
GENHOST = os.path.join(SRC, "tools", "vpa-genhost")
HOSTS = os.path.join(SRC, "data", "hosts")
DOMAINS = os.path.join(SRC, "data", "domains")
VPA_NS = "http://virt-pci-affinity.org/xmlns/libvirt/domain/1.0"

results = []


class Skip(Exception):
    pass


def check(name, func, *args):
    try:
        func(*args)
        results.append(("ok", name, ""))
    except Skip as e:
        results.append(("ok", name, " # SKIP %s" % e))
    except Exception as e:  # report and go on: one line per failure
        results.append(("not ok", name, ""))
        for line in ("%s: %s" % (type(e).__name__, e)).splitlines():
            print("# " + line)


def genhost(*args, expect=0):
    p = subprocess.run([sys.executable, GENHOST] + list(args),
                       capture_output=True, text=True)
    if p.returncode != expect:
        raise AssertionError("vpa-genhost %s: exit %d, expected %d: %s"
                             % (" ".join(args), p.returncode, expect, p.stderr.strip()))
    return p


def read(path):
    with open(path, "rb") as f:
        return f.read()


# -- snapshot model ------------------------------------------------------

def bdf_of(cap):
    return "%04x:%02x:%02x.%d" % tuple(int(cap.findtext(k)) for k in
                                       ("domain", "bus", "slot", "function"))


def bdf_attr(addr):
    return "%04x:%02x:%02x.%d" % tuple(int(addr.get(k), 16) for k in
                                       ("domain", "bus", "slot", "function"))


def parse_snapshot(path):
    root = ET.parse(path).getroot()
    assert root.tag == "node", "%s: root is <%s>, not <node>" % (path, root.tag)
    pci, nets, domains = {}, {}, []
    for dev in root.findall("device"):
        name = dev.findtext("name")
        cap = dev.find("capability")
        if cap.get("type") == "pci":
            numa = cap.find("numa")
            vf_cap = cap.find("capability[@type='virt_functions']")
            pf_cap = cap.find("capability[@type='phys_function']")
            info = {
                "name": name,
                "vendor": cap.find("vendor").get("id"),
                "product": cap.find("product").get("id"),
                "class": cap.findtext("class"),
                "numa": int(numa.get("node")) if numa is not None else -1,
                "driver": dev.findtext("driver/name"),
                "path": dev.findtext("path"),
                "parent": dev.findtext("parent"),
                "link": [(l.get("speed"), l.get("width"))
                         for l in cap.findall("pci-express/link[@validity='sta']")],
                "vfs": ([bdf_attr(a) for a in vf_cap.findall("address")]
                        if vf_cap is not None else None),
                "max": int(vf_cap.get("maxCount")) if vf_cap is not None else None,
                "pf": bdf_attr(pf_cap.find("address")) if pf_cap is not None else None,
                "group": int(cap.find("iommuGroup").get("number")),
                "netdevs": [],
            }
            addr = bdf_of(cap)
            assert name == "pci_" + re.sub("[:.]", "_", addr), name
            assert addr not in pci, "%s twice" % addr
            pci[addr] = info
        elif cap.get("type") == "net":
            nets[name] = (dev.findtext("parent"), cap.findtext("interface"),
                          cap.findtext("address"))
    for parent, ifname, mac in nets.values():
        owner = [d for d in pci.values() if d["name"] == parent]
        assert owner, "netdev %s: parent %s is not a PCI device" % (ifname, parent)
        owner[0]["netdevs"].append((ifname, mac))
    for dom in root.findall("domain"):
        addrs = [bdf_attr(a) for a in dom.findall("devices/interface/source/address")
                 + dom.findall("devices/hostdev/source/address")]
        domains.append((dom.findtext("name"), addrs))
    caps = root.findall("capabilities")
    assert len(caps) == 1, "%d <capabilities>" % len(caps)
    cells = {}
    for cell in caps[0].findall("host/topology/cells/cell"):
        cpus = {}
        for cpu in cell.findall("cpus/cpu"):
            cpus[int(cpu.get("id"))] = (int(cpu.get("socket_id"))
                                        if cpu.get("socket_id") is not None else None)
        cells[int(cell.get("id"))] = (int(cell.findtext("memory")), cpus)
    return {"pci": pci, "domains": domains, "cells": cells}


# -- sysfs model ---------------------------------------------------------

def parse_cpulist(text):
    out = set()
    for part in filter(None, text.strip().split(",")):
        lo, _, hi = part.partition("-")
        out.update(range(int(lo), int(hi or lo) + 1))
    return out


def sysfs_read(path):
    with open(path) as f:
        text = f.read()
    assert text.endswith("\n"), "%s: no trailing newline" % path
    return text[:-1]


def check_sysfs_agrees(root, snap):
    devdir = os.path.join(root, "sys/bus/pci/devices")
    names = sorted(os.listdir(devdir))
    assert names == sorted(snap["pci"]), \
        "sysfs has %d PCI devices, snapshot %d" % (len(names), len(snap["pci"]))
    for addr in names:
        d = os.path.join(devdir, addr)
        info = snap["pci"][addr]
        real = os.path.realpath(d)
        assert real == os.path.realpath(root + info["path"]), "%s: path" % addr
        assert os.readlink(d).startswith("../"), "%s: link not relative" % addr
        above = os.path.basename(os.path.dirname(real))
        want = ("pci_" + re.sub("[:.]", "_", above)
                if re.match(r"^[0-9a-f]{4}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-7]$", above)
                else "computer")
        assert info["parent"] == want, "%s: parent %s, sysfs %s" % (addr, info["parent"], want)
        if info["link"]:
            speed, width = info["link"][0]
            cur = sysfs_read(os.path.join(d, "current_link_speed"))
            assert cur == ("%s GT/s PCIe" % (speed if "." in speed else speed + ".0")
                           if speed else "Unknown"), "%s: link speed %s" % (addr, cur)
            assert sysfs_read(os.path.join(d, "current_link_width")) == width, addr
        for key, fname in (("vendor", "vendor"), ("product", "device"), ("class", "class")):
            assert sysfs_read(os.path.join(d, fname)) == info[key], "%s: %s" % (addr, fname)
        assert int(sysfs_read(os.path.join(d, "numa_node"))) == info["numa"], addr
        drv = os.path.join(d, "driver")
        assert os.path.basename(os.readlink(drv)) == info["driver"], "%s: driver" % addr
        assert os.path.realpath(drv) == os.path.join(
            os.path.realpath(root), "sys/bus/pci/drivers", info["driver"]), addr
        group = os.path.realpath(os.path.join(d, "iommu_group"))
        assert group == os.path.join(os.path.realpath(root), "sys/kernel/iommu_groups",
                                     str(info["group"])), "%s: iommu_group" % addr
        if info["vfs"] is not None:
            assert int(sysfs_read(os.path.join(d, "sriov_totalvfs"))) == info["max"], addr
            assert int(sysfs_read(os.path.join(d, "sriov_numvfs"))) == len(info["vfs"]), addr
            for i, vf in enumerate(info["vfs"]):
                link = os.path.join(d, "virtfn%d" % i)
                assert os.path.basename(os.readlink(link)) == vf, "%s: virtfn%d" % (addr, i)
                assert os.path.isdir(link), "%s: virtfn%d dangles" % (addr, i)
        else:
            assert not os.path.exists(os.path.join(d, "sriov_totalvfs")), addr
        physfn = os.path.join(d, "physfn")
        if info["pf"] is not None:
            assert os.path.basename(os.readlink(physfn)) == info["pf"], "%s: physfn" % addr
            assert os.path.isdir(physfn), "%s: physfn dangles" % addr
        else:
            assert not os.path.lexists(physfn), "%s: unexpected physfn" % addr
        netdir = os.path.join(d, "net")
        have = sorted(os.listdir(netdir)) if os.path.isdir(netdir) else []
        assert have == sorted(n for n, _ in info["netdevs"]), "%s: net" % addr
        for ifname, mac in info["netdevs"]:
            assert sysfs_read(os.path.join(netdir, ifname, "address")) == mac, ifname
            cls = os.path.join(root, "sys/class/net", ifname, "device")
            assert os.path.realpath(cls) == real, "%s: /sys/class/net link" % ifname
    check_sysfs_topology(root, snap)


def check_sysfs_topology(root, snap):
    base = os.path.join(root, "sys/devices/system")
    nodes = parse_cpulist(sysfs_read(os.path.join(base, "node/online")))
    assert nodes == set(snap["cells"]), "node/online %s" % sorted(nodes)
    for node, (mem, cpus) in snap["cells"].items():
        nd = os.path.join(base, "node/node%d" % node)
        assert parse_cpulist(sysfs_read(os.path.join(nd, "cpulist"))) == set(cpus), node
        first = sysfs_read(os.path.join(nd, "meminfo")).splitlines()[0]
        assert re.fullmatch(r"Node %d MemTotal: +%d kB" % (node, mem), first), first
        for cpu, socket in cpus.items():
            cd = os.path.join(base, "cpu/cpu%d" % cpu)
            topo = os.path.join(cd, "topology")
            if socket is None:
                assert not os.path.exists(topo), "cpu%d: offline but has topology" % cpu
                assert sysfs_read(os.path.join(cd, "online")) == "0", cpu
            else:
                pkg = sysfs_read(os.path.join(topo, "physical_package_id"))
                assert int(pkg) == socket, "cpu%d: socket" % cpu
                for f in ("die_id", "core_id"):
                    int(sysfs_read(os.path.join(topo, f)))


def tree(root):
    """{relative path: ('l', target) | ('f', bytes)} for files and links."""
    out = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for n in dirnames + filenames:
            p = os.path.join(dirpath, n)
            rel = os.path.relpath(p, root)
            if os.path.islink(p):
                out[rel] = ("l", os.readlink(p))
            elif os.path.isfile(p):
                out[rel] = ("f", read(p))
    return out


def check_same_file(generated, committed):
    assert read(generated) == read(committed), \
        "%s is stale: regenerate it (see docs/sample-hosts.md)" % committed


def compare_trees(expected, actual):
    a, b = tree(expected), tree(actual)
    missing = sorted(set(a) - set(b))
    extra = sorted(set(b) - set(a))
    assert not missing and not extra, "missing %s, extra %s" % (missing[:3], extra[:3])
    diff = sorted(k for k in a if a[k] != b[k])
    assert not diff, "differs: %s" % diff[:3]


# -- libvirt test driver (in process, via ctypes) -------------------------

class Libvirt:
    CAP_PCI = 1 << 1

    def __init__(self):
        path = ctypes.util.find_library("virt") or "libvirt.so.0"
        try:
            lib = ctypes.CDLL(path)
        except OSError:
            raise Skip("libvirt.so not found")
        vp = ctypes.c_void_p
        lib.virConnectOpen.restype = vp
        lib.virConnectOpen.argtypes = [ctypes.c_char_p]
        lib.virConnectClose.argtypes = [vp]
        lib.virConnectListAllNodeDevices.argtypes = [vp, ctypes.POINTER(ctypes.POINTER(vp)),
                                                     ctypes.c_uint]
        lib.virConnectListAllDomains.argtypes = lib.virConnectListAllNodeDevices.argtypes
        lib.virNodeDeviceGetName.restype = ctypes.c_char_p
        lib.virNodeDeviceGetName.argtypes = [vp]
        lib.virNodeDeviceGetXMLDesc.restype = vp
        lib.virNodeDeviceGetXMLDesc.argtypes = [vp, ctypes.c_uint]
        lib.virNodeDeviceFree.argtypes = [vp]
        lib.virDomainGetName.restype = ctypes.c_char_p
        lib.virDomainGetName.argtypes = [vp]
        lib.virDomainFree.argtypes = [vp]
        self.libc = ctypes.CDLL(None)
        self.libc.free.argtypes = [vp]
        self.lib = lib

    def load(self, path):
        """(name -> device XML for PCI devices, [domain names])"""
        lib = self.lib
        conn = lib.virConnectOpen(("test://" + path).encode())
        assert conn, "test driver refused %s" % path
        try:
            arr = ctypes.POINTER(ctypes.c_void_p)()
            n = lib.virConnectListAllNodeDevices(conn, ctypes.byref(arr), self.CAP_PCI)
            assert n >= 0, "virConnectListAllNodeDevices failed"
            devs = {}
            for i in range(n):
                x = lib.virNodeDeviceGetXMLDesc(arr[i], 0)
                devs[lib.virNodeDeviceGetName(arr[i]).decode()] = ctypes.string_at(x).decode()
                self.libc.free(x)
                lib.virNodeDeviceFree(arr[i])
            self.libc.free(arr)
            arr = ctypes.POINTER(ctypes.c_void_p)()
            n = lib.virConnectListAllDomains(conn, ctypes.byref(arr), 0)
            assert n >= 0, "virConnectListAllDomains failed"
            doms = []
            for i in range(n):
                doms.append(lib.virDomainGetName(arr[i]).decode())
                lib.virDomainFree(arr[i])
            self.libc.free(arr)
            return devs, doms
        finally:
            lib.virConnectClose(conn)


_libvirt = []


def libvirt():
    if not _libvirt:
        try:
            _libvirt.append(Libvirt())
        except Skip as e:
            _libvirt.append(e)
    if isinstance(_libvirt[0], Skip):
        raise _libvirt[0]
    return _libvirt[0]


DRIVER_RE = re.compile(r"  <driver>\n    <name>[^<]*</name>\n  </driver>\n")
# Our <vpa:bars> (the BARs libvirt's nodedev XML lacks): the test driver
# drops it.
BARS_RE = re.compile(r"    <vpa:bars [^>]*/>\n")


def as_libvirt(block):
    """A snapshot's device block as libvirt's test driver prints it back."""
    return BARS_RE.sub("", DRIVER_RE.sub("", block, count=1))


def device_blocks(path):
    text = read(path).decode()
    out = {}
    for m in re.finditer(r"<device>\n  <name>(pci_[^<]*)</name>\n.*?</device>\n", text, re.S):
        out[m.group(1)] = m.group(0)
    return out


def check_libvirt_loads(path, snap):
    devs, doms = libvirt().load(path)
    ours = device_blocks(path)
    assert sorted(devs) == sorted(ours), \
        "test driver has %d PCI devices, snapshot %d" % (len(devs), len(ours))
    for name, xml in ours.items():
        # The test driver does not parse <driver> nor keep <vpa:bars>;
        # everything else round-trips.
        assert devs[name] == as_libvirt(xml), "%s differs" % name
    assert sorted(doms) == sorted(n for n, _ in snap["domains"]), doms


def check_virsh(path, snap):
    virsh = shutil.which("virsh")
    if not virsh:
        raise Skip("virsh not installed")
    uri = "test://" + path
    p = subprocess.run([virsh, "-c", uri, "list", "--all", "--name"],
                       capture_output=True, text=True, check=True)
    assert sorted(filter(None, p.stdout.split("\n"))) == sorted(n for n, _ in snap["domains"])
    name, block = sorted(device_blocks(path).items())[-1]
    p = subprocess.run([virsh, "-c", uri, "nodedev-dumpxml", name],
                       capture_output=True, text=True, check=True)
    assert p.stdout.rstrip("\n") + "\n" == as_libvirt(block), name


def check_xmllint(path):
    ET.parse(path)
    xmllint = shutil.which("xmllint")
    if xmllint:
        subprocess.run([xmllint, "--noout", path], check=True)


# -- configs -------------------------------------------------------------

def addr_glob_match(pattern, addr):
    """Nova's glob: [[[[domain]:]bus]:][slot][.[function]], '*' or empty = any."""
    dbs, _, fn = pattern.partition(".")
    parts = dbs.split(":")
    parts = ["*"] * (3 - len(parts)) + parts
    want = addr.replace(".", ":").split(":")
    for p, w in zip(parts + [fn or "*"], want):
        if p not in ("", "*") and int(p, 16) != int(w, 16):
            return False
    return True


def check_config(conf, snap):
    cp = configparser.ConfigParser(interpolation=None, strict=True)
    cp.optionxform = str
    with open(conf) as f:
        cp.read_file(f)
    pci = snap["pci"]
    netdevs = {n: a for a, d in pci.items() for n, _ in d["netdevs"]}
    for section in cp.sections():
        kind, _, name = section.partition(" ")
        assert kind in ("device-spec", "alias", "inventory", "claims", "host"), section
        g = cp[section]
        if kind == "host":
            cpus = set(snap["cpus"]) if "cpus" in snap else None
            for key in ("cpu-dedicated-set", "cpu-shared-set"):
                if key in g and cpus is not None:
                    assert set(parse_cpulist(g[key])) <= cpus, "%s: %s names CPUs the host lacks" % (section, key)
            continue
        if kind == "alias":
            assert any(d["vendor"] == "0x" + g["vendor-id"] and
                       d["product"] == "0x" + g["product-id"] for d in pci.values()), section
        if kind != "device-spec":
            continue
        matched = [a for a, d in pci.items()
                   if ("vendor-id" not in g or d["vendor"] == "0x" + g["vendor-id"])
                   and ("product-id" not in g or d["product"] == "0x" + g["product-id"])]
        if "devname" in g:
            assert g["devname"] in netdevs, "%s: no netdev '%s'" % (section, g["devname"])
            pf = netdevs[g["devname"]]
            matched = [a for a in matched if a == pf or pci[a]["pf"] == pf]
        if "address" in g:
            pat = g["address"]
            if "*" in pat:
                matched = [a for a in matched if addr_glob_match(pat, a)]
            else:
                assert pat in pci, "%s: no device '%s'" % (section, pat)
                matched = [a for a in matched if a == pat or pci[a]["pf"] == pat]
        assert matched, "%s matches no device" % section


# -- domains -------------------------------------------------------------

def fill_sources(text):
    """Gives every source-less hostdev interface a distinct placeholder
    source, as place would, so that libvirt can judge the rest."""
    count = [0]

    def repl(m):
        count[0] += 1
        return (m.group(1) + "<source>\n        <address type='pci' domain='0x0000' "
                "bus='0xfe' slot='0x%02x' function='0x0'/>\n      </source>\n      "
                % count[0] + m.group(2))
    return re.sub(r"(<interface type='hostdev'[^>]*>\s*<mac [^>]*/>\s*)(<alias)", repl, text)


def check_domain(path, tmp):
    root = ET.parse(path).getroot()
    aliases = {a.get("name") for a in root.iter("alias")}
    aff = root.find("metadata/{%s}affinity" % VPA_NS)
    assert aff is not None, "no vpa:affinity"
    for port in aff.findall("{%s}port" % VPA_NS):
        assert port.get("device") in aliases, "port device '%s'" % port.get("device")
    filled = os.path.join(tmp, os.path.basename(path))
    with open(filled, "w") as f:
        f.write(fill_sources(read(path).decode()))
    validate = shutil.which("virt-xml-validate")
    if validate:
        subprocess.run([validate, filled, "domain"], check=True, capture_output=True)
    virsh = shutil.which("virsh")
    if not virsh:
        raise Skip("virsh not installed")
    p = subprocess.run([virsh, "-c", "test:///default", "define", filled],
                       capture_output=True, text=True)
    assert p.returncode == 0, p.stderr.strip()


# -- generator behaviour ---------------------------------------------------

def check_bench(tmp):
    args = ["--vfs", "256", "--nodes", "4", "--sockets", "2", "--vfs-per-pf", "16",
            "--held", "30", "--held-per-domain", "4"]
    a, b = os.path.join(tmp, "a.xml"), os.path.join(tmp, "b.xml")
    genhost(*args, "-o", a, "--sysfs", os.path.join(tmp, "a.sysfs"),
            "--conf", os.path.join(tmp, "a.conf"))
    genhost(*args, "-o", b)
    assert read(a) == read(b), "two runs differ"
    snap = parse_snapshot(a)
    vfs = [d for d in snap["pci"].values() if d["pf"] is not None]
    assert len(vfs) == 256, "%d VFs" % len(vfs)
    pfs = [d for d in snap["pci"].values() if d["vfs"] is not None]
    assert len(pfs) == 16 and all(len(d["vfs"]) == 16 for d in pfs)
    assert sorted({d["numa"] for d in pfs}) == [0, 1, 2, 3]
    held = [x for _, addrs in snap["domains"] for x in addrs]
    assert len(held) == 30 and len(set(held)) == 30, "held %d" % len(held)
    assert len(snap["domains"]) == 8, "%d domains" % len(snap["domains"])
    assert all(snap["pci"][x]["pf"] for x in held), "held a non-VF"
    check_sysfs_agrees(os.path.join(tmp, "a.sysfs"), snap)
    check_config(os.path.join(tmp, "a.conf"), snap)


def check_bench_switches(tmp):
    # GPUs and the first cards below PCIe switches, the rest on root ports.
    out = os.path.join(tmp, "gpus.xml")
    genhost("--vfs", "512", "--vfs-per-pf", "32", "--gpus", "6", "--gpus-per-switch", "2",
            "-o", out, "--sysfs", os.path.join(tmp, "gpus.sysfs"))
    snap = parse_snapshot(out)
    check_sysfs_agrees(os.path.join(tmp, "gpus.sysfs"), snap)
    gpus = [d for d in snap["pci"].values() if d["vendor"] == "0x10de"]
    assert len(gpus) == 6, "%d GPUs" % len(gpus)
    by_switch = {}
    for d in snap["pci"].values():
        parts = d["path"].split("/")[3:]   # pciDDDD:BB, root port, ...
        if len(parts) >= 5 and d["class"] != "0x060400":
            by_switch.setdefault(parts[2], []).append(d)
    assert len(by_switch) == 3, "%d switches" % len(by_switch)
    for usp, devs in by_switch.items():
        kinds = sorted({d["vendor"] for d in devs})
        assert "0x10de" in kinds and len(kinds) == 2, "%s holds %s" % (usp, kinds)
        assert len({d["numa"] for d in devs}) == 1, "%s spans nodes" % usp
    pfs = [d for d in snap["pci"].values() if d["vfs"] is not None]
    behind = [d for d in pfs if len(d["path"].split("/")) == 8]
    assert len(behind) == 6 and len(pfs) == 16, "%d of %d PFs behind switches" % (
        len(behind), len(pfs))


def check_bench_segments(tmp):
    # More cards than one PCI segment's buses hold spill into domain 0001.
    out = os.path.join(tmp, "seg.xml")
    genhost("--vfs", "2048", "--vfs-per-pf", "16", "--ports-per-card", "1", "-o", out)
    snap = parse_snapshot(out)
    segments = {a[:4] for a in snap["pci"]}
    assert segments == {"0000", "0001"}, segments


BAD = [
    ('{"hostname": "x", "sockets": 1, "cpus_per_node": 2, "colour": 1}',
     "unknown key 'colour'"),
    ('{"hostname": "x", "sockets": 1, "cpus_per_node": 3}',
     "'threads_per_core' 2 does not divide 'cpus_per_node' 3"),
    ('{"hostname": "x", "sockets": 1, "cpus_per_node": 2, "nics": [{"name": "a", '
     '"vendor": "8086", "pf_product": "159b", "vf_product": "1889", "bus": "3b", '
     '"node": 4, "ports": 1, "vfs_per_port": 1}]}', "no such NUMA node '4'"),
    ('{"hostname": "x", "sockets": 1, "cpus_per_node": 2, "devices": ['
     '{"name": "a", "vendor": "10de", "product": "20b5", "class": "0x030200", "bus": "3b"},'
     '{"name": "b", "vendor": "10de", "product": "20b5", "class": "0x030200", "bus": "3b"}]}',
     "PCI address '0000:3b:00.0' used twice"),
    ('{"hostname": "x", "sockets": 1, "cpus_per_node": 2, "nics": [{"name": "a", '
     '"vendor": "8086", "pf_product": "159b", "vf_product": "1889", "bus": "3b", '
     '"node": 0, "ports": 1, "vfs_per_port": 2}], "domains": [{"name": "d1", '
     '"interfaces": ["a/0/1"]}, {"name": "d2", "hostdevs": ["a/0"]}]}',
     "'a/0' conflicts with '0000:3b:01.1' held by domain 'd1'"),
    ('{"hostname": "x", "sockets": 1, "cpus_per_node": 2, "domains": '
     '[{"name": "d1", "hostdevs": ["gpu9"]}]}', "no such device 'gpu9'"),
    ('{"hostname": "x", "sockets": 1, "cpus_per_node": 2, "devices": [{"name": "a", '
     '"vendor": "10de", "product": "2330", "class": "0x030200", "bus": "3b", '
     '"switch": "sw9"}]}', "no such switch 'sw9'"),
    ('{"hostname": "x", "sockets": 1, "cpus_per_node": 2, "switches": [{"name": "s", '
     '"bus": "20", "ports": 1}], "devices": [{"name": "a", "vendor": "10de", '
     '"product": "2330", "class": "0x030200", "bus": "22", "switch": "s"}, {"name": "b", '
     '"vendor": "10de", "product": "2330", "class": "0x030200", "bus": "23", '
     '"switch": "s"}]}', "switch 's' has no free downstream port '1'"),
]


def check_bad_input(tmp):
    for i, (text, message) in enumerate(BAD):
        path = os.path.join(tmp, "bad%d.json" % i)
        with open(path, "w") as f:
            f.write(text)
        p = genhost(path, expect=2)
        assert p.stdout == "", "bad%d: wrote a snapshot" % i
        assert message in p.stderr and p.stderr.count("\n") == 1, \
            "bad%d: %r" % (i, p.stderr)


def main():
    tmp = tempfile.mkdtemp(prefix="check-genhost-")
    try:
        for desc in sorted(glob.glob(os.path.join(HOSTS, "*.json"))):
            name = os.path.basename(desc)[:-5]
            xml = os.path.join(tmp, name + ".xml")
            sysfs = os.path.join(tmp, name + ".sysfs")
            genhost(desc, "-o", xml, "--sysfs", sysfs)
            check("%s: snapshot is what the generator writes" % name,
                  check_same_file, xml, os.path.join(HOSTS, name + ".xml"))
            committed = os.path.join(HOSTS, name + ".sysfs")
            if os.path.isdir(committed):
                check("%s: sysfs tree is what the generator writes" % name,
                      compare_trees, sysfs, committed)
            check("%s: snapshot is well-formed" % name, check_xmllint, xml)
            snap = parse_snapshot(xml)
            check("%s: sysfs tree and snapshot agree" % name, check_sysfs_agrees, sysfs, snap)
            check("%s: libvirt test driver loads the same devices and domains" % name,
                  check_libvirt_loads, xml, snap)
            check("%s: virsh list and nodedev-dumpxml" % name, check_virsh, xml, snap)
            conf = os.path.join(HOSTS, name + ".conf")
            check("%s: config names devices the host has" % name, check_config, conf, snap)
        dtmp = os.path.join(tmp, "domains")
        os.mkdir(dtmp)
        for dom in sorted(glob.glob(os.path.join(DOMAINS, "*.xml"))):
            check("domain %s is valid" % os.path.basename(dom), check_domain, dom, dtmp)
        btmp = os.path.join(tmp, "bench")
        os.mkdir(btmp)
        check("benchmark host: deterministic and consistent", check_bench, btmp)
        check("benchmark host: spills into a second PCI segment", check_bench_segments, btmp)
        check("benchmark host: GPUs and NICs below PCIe switches", check_bench_switches, btmp)
        check("bad descriptions are refused with one line", check_bad_input, btmp)
    finally:
        shutil.rmtree(tmp)
    for i, (status, name, extra) in enumerate(results, 1):
        print("%s %d - %s%s" % (status, i, name, extra))
    print("1..%d" % len(results))
    return 0 if all(s == "ok" for s, _, _ in results) else 1


if __name__ == "__main__":
    sys.exit(main())
