#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""The hook's re-placement, fast path against full path.

    test-hook-replace.py HOOK GENHOST CLI [CASES] [SEED]

`migrate begin` / `restore begin` first try to answer "unchanged" from the
domain's own devices (docs/hook.md, "Re-placing"); VPA_HOOK_REPLACE=full
(honoured by the hook in its build tree) makes them place over the whole
inventory as before. On a host from tools/vpa-genhost (sysfs tree), this
places generated domains, then runs both on many generated cases: devices
moved to other functions, to the other node, to PFs and away from the
host; the devices, their PFs or their VFs claimed by running and by
defined domains, with every way the XML can write an address (decimal,
upper case, quotes, blanks, prefixes, references, a DTD default, a
comment, another encoding); policies, NUMA bindings, placed records and
device specs changed. Every case must give the same exit status, stdout
and stderr both ways, and every kind of answer (unchanged, rewritten,
refused) must occur, the fast path answering "unchanged" in most of them
(counted through its debug line).
"""
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile

XMLNS = 'http://virt-pci-affinity.org/xmlns/libvirt/domain/1.0'
POLICIES = ['required', 'socket', 'preferred', 'legacy', None]
FAST_LINE = 'every device kept (fast path)'

HOOK = sys.argv[1]
GENHOST = sys.argv[2]
CLI = sys.argv[3]
CASES = int(sys.argv[4]) if len(sys.argv) > 4 else 300
SEED = int(sys.argv[5]) if len(sys.argv) > 5 else 20261201

tap = []


def ok(cond, name):
    tap.append(('ok' if cond else 'not ok', name))
    return cond


def bind_vfio(root, addrs):
    """Binds addrs to vfio-pci in the sysfs tree; returns what to restore."""
    drivers = os.path.join(root, 'sys', 'bus', 'pci', 'drivers', 'vfio-pci')
    os.makedirs(drivers, exist_ok=True)
    saved = []
    for a in sorted(addrs):
        link = os.path.join(root, 'sys', 'bus', 'pci', 'devices', a, 'driver')
        old = os.readlink(link) if os.path.islink(link) else None
        if old is not None:
            os.unlink(link)
        os.symlink(os.path.relpath(drivers, os.path.realpath(os.path.dirname(link))), link)
        saved.append((link, old))
    return saved


def unbind(root, saved):
    for link, old in saved:
        os.unlink(link)
        if old is not None:
            os.symlink(old, link)


def write(path, text, mode='w', encoding=None):
    with open(path, mode, encoding=encoding) as f:
        f.write(text)


def sysfs_devices(root):
    """addr -> {'node', 'product', 'pf' (a VF's PF or None)} for the PCI
    functions of the tree that are not bridges."""
    base = os.path.join(root, 'sys', 'bus', 'pci', 'devices')
    out = {}
    for a in sorted(os.listdir(base)):
        d = os.path.join(base, a)
        cls = open(os.path.join(d, 'class')).read().strip()
        if cls.startswith('0x0604'):
            continue
        pf = os.path.join(d, 'physfn')
        out[a] = {'node': int(open(os.path.join(d, 'numa_node')).read()),
                  'product': open(os.path.join(d, 'device')).read().strip(),
                  'pf': os.path.basename(os.readlink(pf)) if os.path.islink(pf) else None}
    return out


def vfs_of(devs, pf):
    return [a for a, d in devs.items() if d['pf'] == pf]


def domain_xml(name, ports, nodes, aliases, group=None, spares=None):
    """A domain asking for ports [(alias, physnet, policy)] and flavor
    aliases 'A:N,...', bound to host nodes (None: not a NUMA guest); with
    group (level, policy), its first two ports form a locality group; with
    spares (a NUMA guest), its devices sit on expander buses bound to its
    cells, with that many spare root ports each."""
    meta = ['    <vpa:affinity xmlns:vpa="%s">' % XMLNS]
    if spares is not None:
        meta.append('      <vpa:guest-numa devices="expander-bus" spare-ports="%d"/>' % spares)
    if aliases:
        meta.append('      <vpa:flavor aliases="%s"/>' % aliases)
    if group:
        meta.append('      <vpa:locality-group name="g" level="%s" policy="%s"/>' % group)
    for i, (dev, physnet, policy) in enumerate(ports):
        attrs = 'device="%s" physnet="%s" vnic-type="direct"' % (dev, physnet)
        if policy:
            attrs += ' policy="%s"' % policy
        if group and i < 2:
            attrs += ' locality-group="g"'
        meta.append('      <vpa:port %s/>' % attrs)
    meta.append('    </vpa:affinity>')
    lines = ["<domain type='kvm'>", '  <name>%s</name>' % name, '  <metadata>'] + meta
    lines += ['  </metadata>', "  <memory unit='KiB'>4194304</memory>",
              "  <vcpu placement='static'>4</vcpu>"]
    if nodes is not None:
        lines += ['  <numatune>',
                  "    <memory mode='strict' nodeset='%s'/>" % ','.join(map(str, nodes)),
                  '  </numatune>']
    lines += ['  <os>', "    <type arch='x86_64' machine='q35'>hvm</type>", '  </os>']
    if spares is not None:
        lines += ['  <features>', '    <acpi/>', '  </features>']
    if nodes is not None:
        lines += ["  <cpu mode='host-passthrough' check='none'>", '    <numa>']
        lines += ["      <cell id='%d' cpus='%d-%d' memory='%d' unit='KiB'/>"
                  % (i, 4 * i // len(nodes), 4 * (i + 1) // len(nodes) - 1,
                     4194304 // len(nodes)) for i in range(len(nodes))]
        lines += ['    </numa>', '  </cpu>']
    lines.append('  <devices>')
    for i, (dev, _, _) in enumerate(ports):
        lines += ["    <interface type='hostdev' managed='yes'>",
                  "      <mac address='52:54:00:aa:00:%02x'/>" % i,
                  "      <alias name='%s'/>" % dev, '    </interface>']
    lines += ['  </devices>', '</domain>', '']
    return '\n'.join(lines)


def parse_addr(a):
    d, b, sf = a.split(':')
    s, f = sf.split('.')
    return int(d, 16), int(b, 16), int(s, 16), int(f, 16)


def address_forms(a, rng):
    """One way of writing the PCI address a in a state file, and whether
    libvirt's parser reads it as a: (xml, named)."""
    d, b, s, f = parse_addr(a)
    canon = "domain='0x%04x' bus='0x%02x' slot='0x%02x' function='0x%x'" % (d, b, s, f)
    forms = [
        (canon, True),
        ('domain="0x%04x" bus="0x%02x" slot="0x%02x" function="0x%x"' % (d, b, s, f), True),
        ("domain='%d' bus='%d' slot='%d' function='%d'" % (d, b, s, f), True),
        ("domain='0X%04X' bus='0X%02X' slot='0X%02X' function='0X%X'" % (d, b, s, f), True),
        ("domain = '0x%04x'  bus\n= '0x%02x' slot='0x%02x' function='0x%x'" % (d, b, s, f),
         True),
        ("bus='0x%02x' function='0x%x' slot='0x%02x'" % (b, f, s), True),
        ("domain='0x%04x' bus='0x%04x' slot='0x%02x' function='0x%x'" % (d, b, s, f), True),
        ("domain='0x%04x' bus='&#x30;x%02x' slot='0x%02x' function='0x%x'" % (d, b, s, f),
         True),
        ("domain='0x%04x' bus='0x%02x' slot='0x%02x' function='&#%d;'" % (d, b, s, 48 + f),
         True),
        ("xmlns:q='urn:q' q:bus='0x%02x' domain='0x%04x' bus='0x%02x' slot='0x%02x' "
         "function='0x%x'" % ((b + 1) % 256, d, b, s, f), True),
        ("xmlns:q='urn:q' domain='0x%04x' q:bus='0x%02x' slot='0x%02x' function='0x%x'"
         % (d, b, s, f), False),
        ("domain='0x%04x' bus='0x%02x' slot='0x%02x' function='0x%x' " % (d, b, s, f), True),
        ("domain='0x%04x' bus=' 0x%02x' slot='0x%02x' function='0x%x'" % (d, b, s, f), False),
        ("domain='0x%04x' bus='0%d' slot='0x%02x' function='0x%x'" % (d, b, s, f), b == 0),
    ]
    return rng.choice(forms)


STATUS = """<domstatus state='running' reason='booted' pid='%(pid)d'>
  <monitor path='/var/lib/libvirt/qemu/domain-%(pid)d-%(name)s/monitor.sock' type='unix'/>
%(domain)s</domstatus>
"""


def state_domain(name, devices, guest=None):
    """A domain named name holding devices [(xml address attributes,
    kind)] (kind 'hostdev', 'iface' or 'actual'), written in one of the
    document forms the hook must read (or see through)."""
    body = ["<domain type='kvm'>", '  <name>%s</name>' % name,
            "  <memory unit='KiB'>1048576</memory>", '  <devices>',
            "    <disk type='file' device='disk'>",
            "      <target dev='vda' bus='virtio'/>",
            "      <address type='drive' controller='0' bus='0' target='0' unit='0'/>",
            '    </disk>',
            "    <controller type='pci' index='1' model='pcie-root-port'>",
            "      <address type='pci' domain='0x0000' bus='0x00' slot='0x02' function='0x0'/>",
            '    </controller>']
    if guest:
        # a guest-side address that equals a host device's: no claim
        body += ["    <controller type='usb' index='0' model='qemu-xhci'>",
                 "      <alias name='usb'/>",
                 "      <address type='pci' %s/>" % guest, '    </controller>',
                 "    <interface type='bridge'>", "      <source bridge='br0'/>",
                 "      <model type='virtio'/>", "      <address type='pci' %s/>" % guest,
                 '    </interface>']
    for attrs, kind in devices:
        if kind == 'hostdev':
            body += ["    <hostdev mode='subsystem' type='pci' managed='yes'>",
                     "      <source><address %s/></source>" % attrs, '    </hostdev>']
        elif kind == 'iface':
            body += ["    <interface type='hostdev' managed='yes'>",
                     "      <source><address type='pci' %s/></source>" % attrs,
                     '    </interface>']
        else:
            body += ["    <interface type='network'>", "      <source network='pool'/>",
                     "      <actual type='hostdev' managed='yes'>",
                     "        <source><address type='pci' %s/></source>" % attrs,
                     '      </actual>', '    </interface>']
    body += ['  </devices>', '</domain>']
    return '\n'.join(body) + '\n'


def wrap_document(text, a, rng):
    """The document as written (libvirt's comment header), or one of the
    forms whose bytes do not show what the parser reads: (text, encoding
    or None, whether the claim is still read as written)."""
    d, b, s, f = parse_addr(a)
    header = ('<!--\nWARNING: THIS IS AN AUTO-GENERATED FILE. CHANGES TO IT ARE LIKELY TO BE\n'
              'OVERWRITTEN AND LOST.\n-->\n')
    choice = rng.randrange(10)
    if choice == 0:
        # the address only in a comment: nothing is claimed
        return (header + text.replace('</domain>', "<!-- <hostdev type='pci'><source>"
                                      "<address domain='0x%04x' bus='0x%02x' slot='0x%02x' "
                                      "function='0x%x'/></source></hostdev> -->\n</domain>"
                                      % (d, b, s, f)), None)
    if choice == 1:
        return ("<?xml version='1.0' encoding='ISO-8859-1'?>\n" + text, 'iso-8859-1')
    if choice == 2:
        return ("<?xml version='1.0' encoding='UTF-16'?>\n" + text, 'utf-16')
    if choice == 3:
        # a DTD default gives the bus the bytes of the element do not show
        dtd = ("<!DOCTYPE domain [<!ATTLIST address bus CDATA '0x%02x'>]>\n" % b)
        return (dtd + re.sub(r"\sbus='0x%02x'" % b, '', text, count=0), None)
    return (header + text, None)


def run_hook(op, xml, conf, full):
    env = {'LC_ALL': 'C', 'PATH': '/usr/bin:/bin', 'HOME': '/',
           'VPA_CONFIG': conf, 'G_MESSAGES_DEBUG': 'vpa'}
    if full:
        env['VPA_HOOK_REPLACE'] = 'full'
    res = subprocess.run([HOOK, 'guest', op, 'begin', '-'], input=xml.encode(),
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, timeout=60)
    err = res.stderr.decode(errors='replace')
    fast = FAST_LINE in err
    # debug lines differ by design (what was read); the rest must not
    err = ''.join(l for l in err.splitlines(True) if 'vpa-DEBUG' not in l)
    return res.returncode, res.stdout, err, fast


def main():
    rng = random.Random(SEED)
    work = tempfile.mkdtemp(prefix='vpa-replace-',
                            dir='/dev/shm' if os.access('/dev/shm', os.W_OK) else None)
    try:
        return body(rng, work)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def make_config(work, name, sysfs, base_conf, run_dir, etc_dir, edit=None):
    text = open(base_conf).read()
    if edit:
        text = edit(text)
    text += ('\n[inventory]\nsource=sysfs:%s\n\n[alias VF]\nvendor-id=8086\nproduct-id=1889\n'
             'device-type=type-VF\nnuma-policy=required\n\n[alias PF]\nvendor-id=8086\n'
             'product-id=159b\ndevice-type=type-PF\nnuma-policy=preferred\n\n'
             '[claims]\nstate-dirs=%s;%s\n' % (sysfs, run_dir, etc_dir))
    path = os.path.join(work, name)
    write(path, text)
    return path


def placed_hostdevs(xml):
    """alias -> address of the domain's placed devices."""
    out = {}
    for m in re.finditer(r"<(?:interface|hostdev)[^>]*>(.*?)</(?:interface|hostdev)>", xml, re.S):
        al = re.search(r"<alias name='([^']+)'", m.group(1))
        ad = re.search(r"<address (?:type='pci' )?domain='0x([0-9a-f]+)' bus='0x([0-9a-f]+)' "
                       r"slot='0x([0-9a-f]+)' function='0x([0-9a-f]+)'", m.group(1))
        if al and ad:
            out[al.group(1)] = '%04x:%02x:%02x.%x' % tuple(int(x, 16) for x in ad.groups())
    return out


def set_address(xml, alias, new):
    d, b, s, f = parse_addr(new)
    # the source address of the element with this alias
    m = re.search(r"<(interface|hostdev)[^>]*>(?:(?!</\1>).)*<alias name='%s'/>"
                  r"(?:(?!</\1>).)*</\1>" % re.escape(alias), xml, re.S)
    if m is None:
        return xml
    el = m.group(0)
    el2 = re.sub(r"domain='0x[0-9a-f]+' bus='0x[0-9a-f]+' slot='0x[0-9a-f]+' "
                 r"function='0x[0-9a-f]+'",
                 "domain='0x%04x' bus='0x%02x' slot='0x%02x' function='0x%x'" % (d, b, s, f),
                 el, count=1)
    return xml[:m.start()] + el2 + xml[m.end():]


def body(rng, work):
    sysfs = os.path.join(work, 'sysfs')
    base_conf = os.path.join(work, 'host.conf')
    subprocess.run([sys.executable, GENHOST, '--vfs', '256', '--nodes', '2', '--sockets', '2',
                    '--vfs-per-pf', '32', '-o', os.path.join(work, 'host.xml'), '--sysfs',
                    sysfs, '--conf', base_conf], check=True)
    devs = sysfs_devices(sysfs)
    addrs = sorted(devs)
    empty_run, empty_etc = os.path.join(work, 'run0'), os.path.join(work, 'etc0')
    os.makedirs(empty_run)
    os.makedirs(empty_etc)
    place_conf = make_config(work, 'place.conf', sysfs, base_conf, empty_run, empty_etc)

    # Placed domains: the full path places them on the empty host.
    domains = []
    for k in range(48):
        n_ports = rng.randrange(0, 4)
        ports = [('ua-p%d' % i, rng.choice(['physnet1', 'physnet2']), rng.choice(POLICIES))
                 for i in range(n_ports)]
        aliases = ','.join(x for x in (('VF:%d' % rng.randrange(1, 3)) if rng.random() < 0.5
                                       else '', 'PF:1' if rng.random() < 0.25 else '') if x)
        if not ports and not aliases:
            aliases = 'VF:1'
        nodes = rng.choice([[0], [1], [0, 1], None])
        group = None
        if n_ports >= 2 and rng.random() < 0.3:
            group = (rng.choice(['switch', 'root-complex', 'numa-node', 'socket']),
                     rng.choice(['required', 'preferred']))
        spares = rng.randrange(0, 3) if nodes is not None and rng.random() < 0.3 else None
        xml = domain_xml('guest', ports, nodes, aliases, group, spares)
        if spares is None:
            rc, out, err, _ = run_hook('migrate', xml, place_conf, True)
        else:
            # a re-placement keeps the guest's PCI layout: a new one is
            # planned by `place`
            res = subprocess.run([CLI, 'place', '-c', 'test:///default', '--inventory',
                                  'sysfs:' + sysfs, '--config', place_conf, '-'],
                                 input=xml.encode(), stdout=subprocess.PIPE,
                                 stderr=subprocess.PIPE, timeout=60)
            rc, out = res.returncode, res.stdout
        if rc == 0 and out:
            domains.append(out.decode())
    ok(len(domains) >= 20, 'placed %d generated domains' % len(domains))
    grouped = sum('locality-group=' in d for d in domains)
    ok(grouped >= 2, '%d of them with a locality group' % grouped)
    expanders = sum('pcie-expander-bus' in d for d in domains)
    ok(expanders >= 2, '%d of them with expander buses' % expanders)

    kinds = {'unchanged': 0, 'rewritten': 0, 'refused': 0}
    fast_answers = 0
    mismatches = []
    for c in range(CASES):
        xml = rng.choice(domains)
        mine = placed_hostdevs(xml)
        cdir = os.path.join(work, 'c%d' % c)
        run_dir, etc_dir = os.path.join(cdir, 'run'), os.path.join(cdir, 'etc')
        os.makedirs(run_dir)
        os.makedirs(etc_dir)
        edit = None
        what = []
        # the relatives a claim may hit: the device, its PF, its VFs
        targets = []
        for a in mine.values():
            targets.append(a)
            if a in devs and devs[a]['pf']:
                targets.append(devs[a]['pf'])
            targets += vfs_of(devs, a)[:3]
        # the devices bound to vfio-pci in sysfs: every device a running
        # domain holds (QEMU holds a device only through VFIO), and now and
        # then one that nobody holds (bound by hand)
        vfio = set()
        if targets and rng.random() < 0.15:
            vfio.add(rng.choice(targets))
        # other domains, some holding one of those
        for i in range(rng.randrange(0, 6)):
            held = []
            held_addrs = []
            for _ in range(rng.randrange(1, 3)):
                if targets and rng.random() < 0.35:
                    a = rng.choice(targets)
                else:
                    a = rng.choice(addrs)
                attrs, _ = address_forms(a, rng)
                held.append((attrs, rng.choice(['hostdev', 'iface', 'actual'])))
                held_addrs.append(a)
            name = 'guest' if rng.random() < 0.05 else 'other%d' % i
            guest = None
            if targets and rng.random() < 0.4:
                guest = address_forms(rng.choice(targets), rng)[0]
            text = state_domain(name, held, guest)
            text, enc = wrap_document(text, a, rng)
            running = rng.random() < 0.5
            if running and name != 'guest':
                vfio.update(held_addrs)
            if running:
                text = STATUS % {'pid': 1000 + i, 'name': name,
                                 'domain': ''.join('  ' + l + '\n' for l in text.splitlines()
                                                   if not l.startswith('<?xml') and
                                                   not l.startswith('<!DOCTYPE'))}
                if text.count('encoding=') == 0 and enc:
                    enc = None
            path = os.path.join(run_dir if running else etc_dir, '%s.xml' % name)
            if enc:
                write(path, text.encode(enc), 'wb')
            else:
                write(path, text)
            what.append('claim')
        # the domain itself changed
        r = rng.random()
        if r < 0.15 and mine:
            alias = rng.choice(sorted(mine))
            xml = set_address(xml, alias, rng.choice(addrs + ['0000:7f:00.0']))
            what.append('moved')
        elif r < 0.22:
            xml = xml.replace('policy="preferred"', 'policy="required"', 1)
            what.append('policy')
        elif r < 0.30 and "nodeset='" in xml:
            xml = re.sub(r"nodeset='[^']*'", "nodeset='%s'" % rng.choice(['0', '1', '0,1']), xml,
                         count=1)
            what.append('binding')
        elif r < 0.36:
            xml = re.sub(r'numa-node="(\d)"', lambda m: 'numa-node="%d"' % (1 - int(m.group(1))),
                         xml, count=1)
            what.append('record')
        elif r < 0.42:
            # a device spec changed: a PF's physnet swapped, or gone
            pf = rng.choice([a for a in addrs if devs[a]['pf'] is None])
            if rng.random() < 0.5:
                def edit(t, pf=pf):
                    return re.sub(r'(address=%s\nphysical-network=physnet)(\d)' % re.escape(pf),
                                  lambda m: m.group(1) + ('2' if m.group(2) == '1' else '1'), t)
            else:
                def edit(t, pf=pf):
                    return re.sub(r'address=%s\n' % re.escape(pf), 'address=0000:7f:00.0\n', t)
            what.append('spec')
        elif r < 0.46:
            xml = xml.replace("<alias name='ua-p0'/>", "<alias name='ua-gone'/>")
            what.append('device element gone')
        # now and then one of those quarantined (docs/reservations.md), often
        # a VF of a PF the domain holds whole (which blocks that PF), drawn
        # apart so that the other cases stay as they were
        state_dir = os.path.join(cdir, 'state')
        rrng = random.Random(SEED * 1000 + c)
        pf_vfs = [v for a in mine.values() for v in vfs_of(devs, a)[:3]]
        if (pf_vfs and rrng.random() < 0.5) or (targets and rrng.random() < 0.15):
            os.makedirs(state_dir)
            write(os.path.join(state_dir, 'reservations'),
                  '# virt-pci-affinity reservations 1\n%s quarantine 1718000000 test\n'
                  % rrng.choice(pf_vfs if pf_vfs and rrng.random() < 0.7 else targets))
            what.append('reserved')
        conf = make_config(cdir, 'hook.conf', sysfs, base_conf, run_dir, etc_dir, edit)
        write(conf, '\n[hook]\nstate-dir=%s\n' % state_dir, 'a')
        op = rng.choice(['migrate', 'restore'])
        saved = bind_vfio(sysfs, vfio)
        full = run_hook(op, xml, conf, True)
        fast = run_hook(op, xml, conf, False)
        unbind(sysfs, saved)
        if full[:3] != fast[:3]:
            mismatches.append('case %d (%s, %s): full: status %d, %d bytes out, %r; fast: '
                              'status %d, %d bytes out, %r'
                              % (c, op, ','.join(what) or 'as placed', full[0], len(full[1]),
                                 full[2][:200], fast[0], len(fast[1]), fast[2][:200]))
            write(os.path.join(work, 'mismatch-%d.xml' % c), xml)
            continue
        if full[0] != 0:
            kinds['refused'] += 1
        elif full[1]:
            kinds['rewritten'] += 1
        else:
            kinds['unchanged'] += 1
            fast_answers += fast[3]
        if full[3]:
            mismatches.append('case %d: the full path took the fast path' % c)
        shutil.rmtree(cdir)
    for m in mismatches[:20]:
        print('# ' + m)
    ok(not mismatches, '%d cases: fast and full path give the same status, stdout and stderr '
       '(%d differ)' % (CASES, len(mismatches)))
    for k, v in kinds.items():
        ok(v >= max(1, CASES // 100), '%s: %d cases' % (k, v))
    ok(fast_answers >= kinds['unchanged'] * 0.6,
       'the fast path answered %d of the %d unchanged cases' % (fast_answers, kinds['unchanged']))
    return 0


if __name__ == '__main__':
    main()
    print('1..%d' % len(tap))
    for i, (status, name) in enumerate(tap, 1):
        print('%s %d - %s' % (status, i, name))
    sys.exit(0 if all(s == 'ok' for s, _ in tap) else 1)
