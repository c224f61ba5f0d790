#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Golden tests of the guest's NUMA distances (TAP).

Every data/guest-distances/HOST-NAME.xml is placed by the built CLI on
HOST: snc-4 (the sample) or gen16 (tools/vpa-genhost, 16 nodes in 4
sockets, generated here) and must give HOST-NAME.out.xml byte for byte;
placing that output again must change nothing; it must validate against
libvirt's domain schema (virt-xml-validate) and libvirt's test driver
must define it. Independently of the golden, each cell's <distances>
must be the host's between the nodes the cells are bound to (from
<numatune><memnode> or the pins), and with distances="keep" the
document's own <cpu> is left byte for byte. VPA_TEST_REGENERATE=1
writes the expected files instead (review the diff before committing).

Usage: test-guest-distances.py CLI DATA-DIR GENHOST
"""
import difflib
import glob
import os
import re
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

n = 0


def ok(cond, what, detail=""):
    global n
    n += 1
    print("%s %d %s" % ("ok" if cond else "not ok", n, what))
    if not cond and detail:
        for line in detail.splitlines()[:20]:
            print("# " + line)


def host_distances(path):
    """{(a, b): value} and {cpu: node} of a host snapshot."""
    caps = ET.parse(path).getroot()
    dist, cpus = {}, {}
    for cell in caps.iter("cell"):
        if cell.find("distances") is None:
            continue
        a = int(cell.get("id"))
        found = cell.find("distances")
        for s in found if found is not None else []:
            dist[(a, int(s.get("id")))] = int(s.get("value"))
        for c in cell.iter("cpu"):
            cpus[int(c.get("id"))] = a
    return dist, cpus


def cell_nodes(dom, cpus):
    """guest cell id -> its one host node, from memnodes, placed cells or pins."""
    out = {}
    for m in dom.iter("memnode"):
        out[int(m.get("cellid"))] = int(m.get("nodeset"))
    if out:
        return out
    pins = {int(p.get("vcpu")): int(p.get("cpuset").split(",")[0].split("-")[0])
            for p in dom.iter("vcpupin")}
    for cell in dom.find("cpu/numa"):
        first = int(re.split("[-,]", cell.get("cpus"))[0])
        out[int(cell.get("id"))] = cpus[pins[first]]
    return out


def check_distances(name, out_text, in_text, host):
    dom = ET.fromstring(out_text)
    if 'distances="keep"' in in_text:
        cpu = re.search(r"<cpu .*?</cpu>", in_text, re.S).group(0)
        ok(cpu in out_text, "%s: distances='keep' leaves <cpu> byte for byte" % name)
        return
    dist, cpus = host_distances(host)
    nodes = cell_nodes(dom, cpus)
    want, got = {}, {}
    for cell in dom.find("cpu/numa"):
        a = int(cell.get("id"))
        found = cell.find("distances")
        for s in found if found is not None else []:
            got[(a, int(s.get("id")))] = int(s.get("value"))
        for b in nodes:
            want[(a, b)] = dist[(nodes[a], nodes[b])]
    ok(got == want, "%s: every cell's distances are the host's between its nodes %s" %
       (name, sorted(set(nodes.values()))), "want %s\ngot  %s" % (want, got))


def hosts(data, genhost, tmp):
    gen = os.path.join(tmp, "gen16.xml")
    subprocess.run([sys.executable, genhost, "--vfs", "64", "--nodes", "16", "--sockets", "4",
                    "--vfs-per-pf", "4", "--cpus-per-node", "4", "--memory-per-node-mib", "8192",
                    "-o", gen, "--conf", os.path.join(tmp, "gen16.conf")], check=True)
    return {
        "snc-4": (os.path.join(data, "hosts", "snc-4.xml"),
                  os.path.join(data, "hosts", "snc-4.conf")),
        "gen16": (gen, os.path.join(tmp, "gen16.conf")),
    }


def place(cli, host, path):
    return subprocess.run([cli, "place", "-c", "test://" + host[0], "--config", host[1], path],
                          capture_output=True, text=True)


def main():
    cli, data, genhost = sys.argv[1], os.path.abspath(sys.argv[2]), sys.argv[3]
    regen = os.environ.get("VPA_TEST_REGENERATE") == "1"
    cases = sorted(p for p in glob.glob(os.path.join(data, "guest-distances", "*.xml"))
                   if not p.endswith(".out.xml"))
    if not cases:
        print("Bail out! no cases in data/guest-distances")
        sys.exit(1)
    with tempfile.TemporaryDirectory() as tmp:
        known = hosts(data, genhost, tmp)
        for path in cases:
            name = os.path.basename(path)[:-4]
            host = known[next(h for h in known if name.startswith(h + "-"))]
            golden = path[:-4] + ".out.xml"
            r = place(cli, host, path)
            if r.returncode != 0:
                ok(False, "%s: place" % name, r.stderr)
                continue
            if regen:
                with open(golden, "w") as f:
                    f.write(r.stdout)
            expected = open(golden).read() if os.path.exists(golden) else ""
            ok(r.stdout == expected, "%s: place gives %s" % (name, os.path.basename(golden)),
               "".join(difflib.unified_diff(expected.splitlines(True),
                                            r.stdout.splitlines(True))))
            check_distances(name, r.stdout, open(path).read(), host[0])
            out = os.path.join(tmp, name + ".xml")
            with open(out, "w") as f:
                f.write(r.stdout)
            again = place(cli, host, out)
            ok(again.returncode == 0 and again.stdout == r.stdout,
               "%s: placing the output again changes nothing" % name, again.stderr)
            v = subprocess.run(["virt-xml-validate", out, "domain"], capture_output=True,
                               text=True)
            ok(v.returncode == 0, "%s: virt-xml-validate accepts it" % name, v.stderr + v.stdout)
            d = subprocess.run(["virsh", "-q", "-c", "test:///default", "define " + out],
                               capture_output=True, text=True)
            ok(d.returncode == 0, "%s: libvirt's test driver defines it" % name, d.stderr)
    print("1..%d" % n)


main()
