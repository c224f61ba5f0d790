#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Golden tests of guest-visible device NUMA (TAP).

Every data/guest-numa/NAME.xml is placed by the built CLI on the
dual-socket sample host and must give NAME.out.xml byte for byte, and
--explain the guest topology in NAME.explain (under NAME.conf when the
case has one, else the host's configuration);
placing that output again must change nothing; the output must validate
against libvirt's domain schema (virt-xml-validate) and libvirt's test
driver must define it. VPA_TEST_REGENERATE=1 writes the expected files
instead (review the diff before committing).

Usage: test-guest-numa.py CLI DATA-DIR
"""
import glob
import os
import subprocess
import sys
import tempfile

n = 0


def ok(cond, what, detail=""):
    global n
    n += 1
    print("%s %d %s" % ("ok" if cond else "not ok", n, what))
    if not cond and detail:
        for line in detail.splitlines()[:20]:
            print("# " + line)


def config_of(data, name):
    """NAME.conf beside the case when it has one (a case that needs more
    of the configuration), else the dual-socket host's."""
    own = os.path.join(data, "guest-numa", name + ".conf")
    return own if os.path.exists(own) else os.path.join(data, "hosts", "dual-socket.conf")


def place(cli, data, path, *extra, name=None):
    name = name or os.path.basename(path)[:-4]
    return subprocess.run(
        [cli, "place", "-c", "test://" + os.path.join(data, "hosts", "dual-socket.xml"),
         "--config", config_of(data, name)] + list(extra) + [path],
        capture_output=True, text=True)


def main():
    cli, data = sys.argv[1], os.path.abspath(sys.argv[2])
    regen = os.environ.get("VPA_TEST_REGENERATE") == "1"
    cases = sorted(p for p in glob.glob(os.path.join(data, "guest-numa", "*.xml"))
                   if not p.endswith(".out.xml"))
    if not cases:
        print("Bail out! no cases in data/guest-numa")
        sys.exit(1)
    with tempfile.TemporaryDirectory() as tmp:
        for path in cases:
            name = os.path.basename(path)[:-4]
            golden = path[:-4] + ".out.xml"
            r = place(cli, data, path, "--explain")
            if r.returncode != 0:
                ok(False, "%s: place" % name, r.stderr)
                continue
            if regen:
                with open(golden, "w") as f:
                    f.write(r.stdout)
            topo = r.stderr[r.stderr.find("guest topology"):] if "guest topology" in r.stderr else ""
            explain = path[:-4] + ".explain"
            if regen:
                with open(explain, "w") as f:
                    f.write(topo)
            want = open(explain).read() if os.path.exists(explain) else ""
            ok(topo == want, "%s: --explain shows the topology of %s" % (name, os.path.basename(explain)),
               topo)
            expected = open(golden).read() if os.path.exists(golden) else ""
            ok(r.stdout == expected, "%s: place gives %s" % (name, os.path.basename(golden)),
               "".join(__import__("difflib").unified_diff(
                   expected.splitlines(True), r.stdout.splitlines(True))))
            out = os.path.join(tmp, name + ".xml")
            with open(out, "w") as f:
                f.write(r.stdout)
            again = place(cli, data, out, name=name)
            ok(again.returncode == 0 and again.stdout == r.stdout,
               "%s: placing the output again changes nothing" % name, again.stderr)
            v = subprocess.run(["virt-xml-validate", out, "domain"], capture_output=True,
                               text=True)
            ok(v.returncode == 0, "%s: virt-xml-validate accepts it" % name, v.stderr + v.stdout)
            d = subprocess.run(["virsh", "-q", "-c", "test:///default", "define " + out],
                               capture_output=True, text=True)
            ok(d.returncode == 0, "%s: libvirt's test driver defines it" % name, d.stderr)
    hole_warning(cli, data)
    print("1..%d" % n)


def hole_warning(cli, data):
    """Seven H100s behind expanders need a 1 TiB hole, which QEMU refuses
    on a guest CPU of 40 address bits: --explain says what the guest
    needs. A hole within 40 bits (the goldens above) has no such line."""
    path = os.path.join(data, "hole64", "q35-seven-gpus.xml")
    r = subprocess.run(
        [cli, "place", "--explain", "-c",
         "test://" + os.path.join(data, "hosts", "gpu-server.xml"),
         "--config", os.path.join(data, "hosts", "gpu-server.conf"), path],
        capture_output=True, text=True)
    ok(r.returncode == 0 and "<pcihole64 unit='KiB'>1073741824</pcihole64>" in r.stdout,
       "q35-seven-gpus: a 1 TiB hole for seven 128 GiB BARs", r.stderr[-2000:])
    ok("a window of 1024 GiB needs a guest CPU with more than 40 physical address bits" in r.stderr,
       "q35-seven-gpus: --explain says the guest CPU needs more than 40 address bits",
       r.stderr[-2000:])
    for explain in glob.glob(os.path.join(data, "guest-numa", "*.explain")):
        ok("physical address bits" not in open(explain).read(),
           "%s: no address-bits line for a hole within 40 bits" % os.path.basename(explain))


main()
