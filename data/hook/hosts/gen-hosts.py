#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
# Writes the small host snapshots the hook tests use (docs/interface.md,
# "Inventory sources": <node> with nodedev <device>s and a <capabilities>). Run it from this
# directory after changing a layout, then review the diff.


def pci(addr, vendor, product, cls, node, driver, extra=''):
    d, b, rest = addr.split(':')
    s, f = rest.split('.')
    name = 'pci_%s_%s_%s_%s' % (d, b, s, f)
    numa = "\n      <numa node='%d'/>" % node if node is not None else ''
    return f"""  <device>
    <name>{name}</name>
    <parent>computer</parent>
    <driver>
      <name>{driver}</name>
    </driver>
    <capability type='pci'>
      <class>0x{cls:06x}</class>
      <domain>{int(d, 16)}</domain>
      <bus>{int(b, 16)}</bus>
      <slot>{int(s, 16)}</slot>
      <function>{int(f, 16)}</function>
      <product id='0x{product}'/>
      <vendor id='0x{vendor}'/>{extra}{numa}
    </capability>
  </device>
"""


def addr_xml(addr):
    d, b, rest = addr.split(':')
    s, f = rest.split('.')
    return f"<address domain='0x{d}' bus='0x{b}' slot='0x{s}' function='0x{f}'/>"


def pf(addr, node, vfs, netdev):
    extra = "\n      <capability type='virt_functions' maxCount='%d'>\n" % len(vfs)
    extra += ''.join('        %s\n' % addr_xml(v) for v in vfs)
    extra += '      </capability>'
    out = pci(addr, '8086', '1572', 0x020000, node, 'i40e', extra)
    d, b, rest = addr.split(':')
    s, f = rest.split('.')
    out += f"""  <device>
    <name>net_{netdev}_3c_fd_fe_00_00_0{f}</name>
    <parent>pci_{d}_{b}_{s}_{f}</parent>
    <capability type='net'>
      <interface>{netdev}</interface>
      <address>3c:fd:fe:00:00:0{f}</address>
    </capability>
  </device>
"""
    for v in vfs:
        out += pci(v, '8086', '154c', 0x020000, node, 'iavf',
                   "\n      <capability type='phys_function'>\n        %s\n"
                   "      </capability>" % addr_xml(addr))
    return out


def caps(cells):
    out = "  <capabilities>\n    <host>\n      <cpu>\n        <arch>x86_64</arch>\n      </cpu>\n"
    out += "      <topology>\n        <cells num='%d'>\n" % len(cells)
    cpu = 0
    for cid, socket in cells:
        out += f"          <cell id='{cid}'>\n            <memory unit='KiB'>8388608</memory>\n"
        out += "            <cpus num='2'>\n"
        for core in range(2):
            out += (f"              <cpu id='{cpu}' socket_id='{socket}' die_id='0' "
                    f"core_id='{core}' siblings='{cpu}'/>\n")
            cpu += 1
        out += "            </cpus>\n          </cell>\n"
    out += "        </cells>\n      </topology>\n    </host>\n  </capabilities>\n"
    return out


def vfs(bus, n):
    return ['0000:%s:10.%d' % (bus, i) for i in range(n)]


def host(path, body, cells):
    with open(path, 'w') as f:
        f.write('<node>\n' + body + caps(cells) + '</node>\n')


# The hook's host: PF 81 (node 0) and PF 82 (node 1), four VFs each, and
# a QuickAssist card on each node. CPUs 0-1 on node 0, 2-3 on node 1.
host('two-node.xml',
     pf('0000:81:00.0', 0, vfs('81', 4), 'ens1f0') +
     pf('0000:82:00.0', 1, vfs('82', 4), 'ens2f0') +
     pci('0000:3d:00.0', '8086', '0443', 0x0b4000, 0, 'qat_c62x') +
     pci('0000:3f:00.0', '8086', '0443', 0x0b4000, 1, 'qat_c62x'),
     [(0, 0), (1, 1)])

# A migration destination laid out differently: other bus numbers, and
# the node-0 PF has only two VFs.
host('destination.xml',
     pf('0000:5e:00.0', 0, vfs('5e', 2), 'ens5f0') +
     pf('0000:d8:00.0', 1, vfs('d8', 4), 'ens6f0') +
     pci('0000:6d:00.0', '8086', '0443', 0x0b4000, 1, 'qat_c62x'),
     [(0, 0), (1, 1)])
