#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Small edits of a domain's XML for guest/start.sh.

domxml.py vf FILE                        the first PCI hostdev's address
domxml.py variant FILE NAME NODE ADDR    FILE renamed NAME, no uuid, bound
                                         to host NODE, its hostdev at ADDR
"""
import sys
import xml.etree.ElementTree as ET

ET.register_namespace("vpa", "http://virt-pci-affinity.org/xmlns/libvirt/domain/1.0")


def addr_of(a):
    return "%04x:%02x:%02x.%x" % tuple(int(a.get(k), 16) for k in
                                       ("domain", "bus", "slot", "function"))


def main():
    dom = ET.parse(sys.argv[2]).getroot()
    a = dom.find("devices/hostdev/source/address")
    if sys.argv[1] == "vf":
        print(addr_of(a))
        return
    name, node, addr = sys.argv[3:6]
    dom.find("name").text = name
    uuid = dom.find("uuid")
    if uuid is not None:
        dom.remove(uuid)
    dom.find("numatune/memory").set("nodeset", node)
    ns = "{http://virt-pci-affinity.org/xmlns/libvirt/domain/1.0}"
    for placed in dom.iter(ns + "placed"):
        if placed.get("address") == addr_of(a):
            placed.set("address", addr)
    d, rest = addr.split(":", 1)
    b, rest = rest.split(":")
    s, f = rest.split(".")
    a.set("domain", "0x" + d)
    a.set("bus", "0x" + b)
    a.set("slot", "0x" + s)
    a.set("function", "0x" + f)
    for ser in dom.findall("devices/serial/source"):
        ser.set("path", ser.get("path").replace("vm1", name))
    sys.stdout.write(ET.tostring(dom, encoding="unicode"))


main()
