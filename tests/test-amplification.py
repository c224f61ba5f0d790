#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Small inputs that used to cost the host a lot, and ten times bigger ones.

    test-amplification.py CLI HOOK DATA_DIR

Generates each hostile domain (huge per-cell nodesets, thousands of
vcpupins, one cpuset of millions of entries, 100 000 attributes on one
element, 50 000 ports and interfaces, ...) at scale 1 and 10, feeds it to
the hook as libvirt runs it (prepare begin, restore begin) and to the
CLI's check and place, each under /usr/bin/time -v, and requires every run
to finish in under 1 s of CPU time (and 10 s of wall time: what blocks
uses none) with under 64 MiB of peak RSS, refused (one line on
stderr, nothing on stdout) or answered; the largest documents the
pre-scan accepts (AT_BOUND) must be answered at scale 1. Prints a TAP
line per run with its figures. Under a test wrapper (valgrind) it only checks the answers.

Then state files past the bounds of a parsed document as libvirt keeps
them (40 000 disks, a large <metadata>): each read by what its claims
read, so that the guest is refused, moved or started as they say.

Then the same for hostile environments: a sysfs tree with a FIFO where
an attribute should be (the hook and the CLI must refuse it, not block),
a configuration of 20 000 groups (device specs and aliases), and the
reservations file at its bounds and past them.
"""
import os
import re
import subprocess
import sys
import tempfile

NS = 'http://virt-pci-affinity.org/xmlns/libvirt/domain/1.0'
MAX_SECONDS = 1.0       # of CPU time (user + system): the work done
MAX_WALL_SECONDS = 10.0  # of wall time: what blocks uses no CPU time
MAX_RSS_KIB = 64 * 1024
MAX_ELEMENTS = 32768        # the pre-scan's bounds (xml/vpa-xml.h)
MAX_ATTRIBUTES = 131072
HOSTDEV = ("<interface type='hostdev' managed='yes'><source><address type='pci' "
           "domain='0x0000' bus='0x81' slot='0x10' function='0x0'/></source>"
           "<alias name='ua-data0'/></interface>")
PORT = '<vpa:port device="ua-data0" physnet="physnet1"/>'


def domain(meta, cpu='', devices=HOSTDEV, extra=''):
    md = ('<metadata><vpa:affinity xmlns:vpa="%s">%s</vpa:affinity></metadata>' % (NS, meta)
          if meta is not None else '')
    return ("<domain type='kvm'><name>guest</name>%s<memory unit='KiB'>1048576</memory>"
            "<vcpu placement='static'>2</vcpu>%s<os><type arch='x86_64' machine='pc'>hvm"
            "</type></os>%s<devices>%s</devices></domain>\n" % (md, extra, cpu, devices))


def cells(n):
    return '<cpu><numa>%s</numa></cpu>' % ''.join(
        "<cell id='%d' cpus='%d' memory='1024'/>" % (i, i) for i in range(n))


def memory_nodeset(meta, scale):
    # One <memory> nodeset that used to be copied into every cell.
    return domain(meta, cells(2600 * scale),
                  extra="<numatune><memory mode='strict' nodeset='0-65535'/></numatune>")


def memnodes(meta, scale):
    n = 4000 * scale
    tune = ''.join("<memnode cellid='%d' mode='strict' nodeset='0-16383'/>" % i
                   for i in range(n))
    return domain(meta, cells(n), extra='<numatune>%s</numatune>' % tune)


def max_cells(meta, scale):
    # Within the bounds: 256 cells, each bound to every node id there is.
    n = 256
    tune = ''.join("<memnode cellid='%d' mode='strict' nodeset='0-%d'/>" % (i, 65535 - i)
                   for i in range(n))
    return domain(meta, cells(n), extra='<numatune>%s</numatune>' % tune)


def vcpupins(meta, scale):
    n = 4096 * scale
    cpu = ("<cpu><numa><cell id='0' cpus='0-%d' memory='1024'/><cell id='1' cpus='%d-%d' "
           "memory='1024'/></numa></cpu>" % (n // 2 - 1, n // 2, n - 1))
    pins = ''.join("<vcpupin vcpu='%d' cpuset='0-%d'/>" % (i, 16383 - i % 7) for i in range(n))
    return domain(meta, cpu, extra='<cputune>%s</cputune>' % pins)


def cpuset_entries(meta, scale):
    cpu = "<cpu><numa><cell id='0' cpus='0-1' memory='1024'/></numa></cpu>"
    pin = "<cputune><vcpupin vcpu='0' cpuset='%s'/></cputune>" % ','.join(['0'] * (400000 * scale))
    return domain(meta, cpu, extra=pin)


def attributes(meta, scale):
    attrs = ' '.join('a%d="x"' % i for i in range(100000 * scale))
    return domain(meta, devices="<interface type='hostdev' managed='yes' %s>"
                  "<alias name='ua-data0'/></interface>" % attrs)


def ports(meta, scale):
    n = 50000 * scale
    if meta is not None:
        meta = ''.join('<vpa:port device="ua-p%d" physnet="physnet1"/>' % i for i in range(n))
    devs = ''.join("<interface type='hostdev' managed='yes'><alias name='ua-p%d'/></interface>" % i
                   for i in range(n))
    return domain(meta, devices=devs)


def ports_at_bound(meta, scale):
    # As many ports as a domain may request (1024), then ten times more.
    n = 1024 * scale
    if meta is not None:
        meta = ''.join('<vpa:port device="ua-p%d" physnet="physnet1"/>' % i for i in range(n))
    devs = ''.join("<interface type='hostdev' managed='yes'><alias name='ua-p%d'/></interface>" % i
                   for i in range(n))
    return domain(meta, devices=devs)


def aliases(meta, scale):
    if meta is not None:
        meta = '<vpa:flavor aliases="%s"/>' % ','.join(['QuickAssist:1'] * (50000 * scale))
    return domain(meta)


def bus_text(meta, scale):
    # A description repeating " bus=x": the byte scan searched back from each.
    return domain(meta, extra='<description>%s</description>' % (' bus=x' * (60000 * scale)))


def markup(text):
    """The elements and attributes of text as the pre-scan counts them."""
    return (len(re.findall(r'<[A-Za-z_]', text)),
            len(re.findall(r'[\s\'"][A-Za-z_][\w:.-]*\s*=\s*[\'"]', text)))


def at_bound(make, one):
    """The most copies of one that make(copies) may hold within the
    pre-scan's bounds: the largest such document it accepts."""
    elements, attributes = markup(make(''))
    per_elements, per_attributes = markup(one)
    return min((MAX_ELEMENTS - elements) // per_elements,
               (MAX_ATTRIBUTES - attributes) // per_attributes)


GUEST_ADDRESS = ("<address type='pci' domain='0x0000' bus='0x81' slot='0x10' function='0x0'/>")


def sibling_addresses(meta, scale):
    # Sibling guest <address>es equal to the device's: each walked back over
    # all. As many as a document may hold (its 131 072 attributes), then ten
    # times more; at the bound, three libxml2 trees of it were 88 MiB.
    def make(addrs):
        return domain(meta, devices=HOSTDEV + "<controller type='usb'>%s</controller>" % addrs)
    return make(GUEST_ADDRESS * (at_bound(make, GUEST_ADDRESS) * scale))


def controller_addresses(meta, scale):
    # Controllers each with a guest <address>: as many as a document may hold
    # (its 32 768 elements), then ten times more.
    one = "<controller type='usb'>%s</controller>" % GUEST_ADDRESS

    def make(controllers):
        return domain(meta, devices=HOSTDEV + controllers)
    return make(one * (at_bound(make, one) * scale))


def numa_sibling_addresses(meta, scale):
    # The same placed whole (placement='auto'): the binding is written into
    # the placement's output, which is past the bounds.
    if meta is not None:
        meta += "<vpa:numa placement='auto'/>"
    return sibling_addresses(meta, scale)


def memory_cells(meta, scale):
    # Memory-only cells with as many pages and memnodes: cells x entries.
    n = 800 * scale
    pages = ''.join("<page size='2048' unit='KiB' nodeset='%d'/>" % i for i in range(n))
    tune = ''.join("<memnode cellid='%d' mode='strict' nodeset='0'/>" % i for i in range(n))
    return domain(meta, cells(n), extra="<memoryBacking><hugepages>%s</hugepages></memoryBacking>"
                  "<numatune>%s</numatune>" % (pages, tune))


def emulatorpin_vcpus(meta, scale):
    # Every vCPU pinned to a CPU, and an emulator pinned to every CPU.
    n = 410 * scale
    pins = ''.join("<vcpupin vcpu='%d' cpuset='%d'/>" % (i, i) for i in range(n))
    return domain(meta, extra="<vcpu>%d</vcpu><cputune>%s<emulatorpin cpuset='0-16383'/>"
                  "</cputune>" % (n, pins)).replace("<vcpu placement='static'>2</vcpu>", '', 1)


def many_disks(meta, scale):
    # Thousands of disks: past the elements a document may have.
    disk = ("<disk type='file' device='disk'><driver name='qemu' type='raw'/>"
            "<source file='/var/lib/d%d.img'/><target dev='vd%d' bus='virtio'/></disk>")
    return domain(meta, devices=HOSTDEV + ''.join(disk % (i, i) for i in range(1000 * scale)))


# The inputs at the document's bounds: at scale 1 each run must answer
# (exit 0), placing the domain whose output passes the bounds by what the
# placement adds.
AT_BOUND = ('sibling-addresses', 'controller-addresses', 'numa-sibling-addresses')

INPUTS = [
    ('memory-nodeset', memory_nodeset),
    ('memnodes', memnodes),
    ('max-cells', max_cells),
    ('vcpupins', vcpupins),
    ('cpuset-entries', cpuset_entries),
    ('attributes', attributes),
    ('ports', ports),
    ('ports-at-bound', ports_at_bound),
    ('aliases', aliases),
    ('bus-text', bus_text),
    ('sibling-addresses', sibling_addresses),
    ('controller-addresses', controller_addresses),
    ('numa-sibling-addresses', numa_sibling_addresses),
    ('memory-cells', memory_cells),
    ('emulatorpin-vcpus', emulatorpin_vcpus),
    ('many-disks', many_disks),
]


def state_runs(tmp, data, hook, env, make, name, scale):
    """The input as another domain's state file, running (<domstatus>) and
    defined, read by the hook for a guest of ours: prepare begin reads the
    running one, restore begin both."""
    runs = []
    for kind in ('running', 'defined'):
        sdir = os.path.join(tmp, 'state-%s-%d-%s' % (name, scale, kind))
        os.mkdir(sdir)
        text = make(None, scale).replace('<name>guest</name>', '<name>other</name>', 1)
        if kind == 'running':
            text = "<domstatus state='running' pid='1'>\n%s</domstatus>\n" % text
        with open(os.path.join(sdir, 'other.xml'), 'w') as f:
            f.write(text)
        conf = os.path.join(sdir, 'hook.conf')
        with open(os.path.join(data, 'hook', 'configs', 'two-node.conf')) as f:
            conf_text = re.sub(r'state-dirs=.*', 'state-dirs=' + sdir,
                               f.read().replace('@DATA@', data))
        with open(conf, 'w') as f:
            f.write(conf_text)
        guest = os.path.join(sdir, 'guest.stdin')
        with open(guest, 'w') as f:
            f.write(domain(PORT))
        size = len(text)
        run_env = dict(env, VPA_CONFIG=conf)
        for op in ('prepare', 'restore'):
            runs.append(('hook %s, %s state file %s x%d' % (op, kind, name, scale), size,
                         [hook, 'guest', op, 'begin', '-'], guest, run_env))
    return runs


def state_disks(devices):
    disk = ("<disk type='file' device='disk'><driver name='qemu' type='raw'/>"
            "<source file='/var/lib/d%d.img'/><target dev='vd%d' bus='virtio'/></disk>")
    return domain(None, devices=devices + ''.join(disk % (i, i) for i in range(40000)))


def state_metadata(filler):
    def make(devices):
        return domain(None, devices=devices).replace(
            '<memory', '<metadata>%s</metadata><memory' % filler, 1)
    return make


def metadata_attributes(n):
    return '<x:tags xmlns:x="urn:example:tags" %s/>' % ' '.join('a%d="x"' % i for i in range(n))


def metadata_elements(size):
    item = '<x:e>%s</x:e>' % ('t' * 32)
    return '<x:big xmlns:x="urn:example:big">%s</x:big>' % (item * (size // len(item)))


def metadata_deep(depth, times):
    one = '<x:d>' * depth + '</x:d>' * depth
    return '<x:deep xmlns:x="urn:example:deep">%s</x:deep>' % (one * times)


# State files past the bounds of a parsed document, as libvirt keeps
# them: each is read by what its claims read, and answered.
STATE_CLASSES = [
    ('40 000 disks', state_disks),
    ('300 attributes on a <metadata> element', state_metadata(metadata_attributes(300))),
    ('a 10 MB <metadata>', state_metadata(metadata_elements(10 * 1024 * 1024))),
    ('nesting 250 deep in <metadata>, 200 times', state_metadata(metadata_deep(250, 200))),
]
# Another VF of the same card: the file is read (it names the bus) and
# holds nothing the guest needs.
OTHER_VF = HOSTDEV.replace("function='0x0'", "function='0x3'").replace('ua-data0', 'ua-other')
GUEST_VF = "bus='0x81' slot='0x10' function='0x0'"


def guest_vf(keeps):
    """The check of a restore's answer: the guest keeps its VF (stdout
    empty: libvirt's XML stands) or is moved off it."""
    def check(out):
        kept = out == '' or GUEST_VF in out
        if kept != keeps:
            return 'the guest %s its VF' % ('was moved off' if keeps else 'kept')
        return None
    return check


def state_class_runs(tmp, data, hook, env):
    """Each class as another domain's state file, running and defined,
    holding the guest's VF or another: prepare begin (running domains
    only) refuses the guest whose VF a running domain holds (exit 1),
    restore begin moves it off a VF any domain holds; holding another VF
    the guest starts on its own."""
    runs = []
    for i, (name, make) in enumerate(STATE_CLASSES):
        for holds in (True, False):
            text = make(HOSTDEV if holds else OTHER_VF)
            text = text.replace('<name>guest</name>', '<name>other</name>', 1)
            for kind in ('running', 'defined'):
                sdir = os.path.join(tmp, 'state-class-%d-%d-%s' % (i, holds, kind))
                os.mkdir(sdir)
                body = text
                if kind == 'running':
                    body = "<domstatus state='running' pid='1'>\n%s</domstatus>\n" % text
                with open(os.path.join(sdir, 'other.xml'), 'w') as f:
                    f.write(body)
                conf = os.path.join(sdir, 'hook.conf')
                with open(os.path.join(data, 'hook', 'configs', 'two-node.conf')) as f:
                    conf_text = re.sub(r'state-dirs=.*', 'state-dirs=' + sdir,
                                       f.read().replace('@DATA@', data))
                with open(conf, 'w') as f:
                    f.write(conf_text)
                guest = os.path.join(sdir, 'guest.stdin')
                with open(guest, 'w') as f:
                    f.write(domain(PORT))
                run_env = dict(env, VPA_CONFIG=conf)
                label = '%s state file of %s, holding %s' % (
                    kind, name, 'the guest\'s VF' if holds else 'another VF')
                argv = [hook, 'guest', 'prepare', 'begin', '-']
                runs.append(('hook prepare, ' + label, len(body), argv, guest, run_env,
                             (1 if holds and kind == 'running' else 0,), None))
                argv = [hook, 'guest', 'restore', 'begin', '-']
                runs.append(('hook restore, ' + label, len(body), argv, guest, run_env, (0,),
                             guest_vf(not holds)))
    return runs


def sysfs_fifo_tree(root):
    """A PF and one of its VFs, whose vendor attribute is a FIFO."""
    devs = os.path.join(root, 'sys', 'bus', 'pci', 'devices')
    attrs = {
        '0000:81:00.0': {'vendor': '0x8086', 'device': '0x1592', 'class': '0x020000',
                         'numa_node': '0', 'sriov_totalvfs': '8'},
        '0000:81:10.0': {'device': '0x1889', 'class': '0x020000', 'numa_node': '0'},
    }
    for addr, files in attrs.items():
        os.makedirs(os.path.join(devs, addr))
        for name, value in files.items():
            with open(os.path.join(devs, addr, name), 'w') as f:
                f.write(value + '\n')
    os.symlink('../0000:81:00.0', os.path.join(devs, '0000:81:10.0', 'physfn'))
    os.mkfifo(os.path.join(devs, '0000:81:10.0', 'vendor'))
    for node, cpus in (('node0', '0-1'), ('node1', '2-3')):
        path = os.path.join(root, 'sys', 'devices', 'system', 'node', node)
        os.makedirs(path)
        with open(os.path.join(path, 'cpulist'), 'w') as f:
            f.write(cpus + '\n')


def many_groups(base, n):
    """base, then n device specs (each its own physical network, so its own
    tag set) and n aliases."""
    parts = [base]
    for i in range(n // 2):
        parts.append('[device-spec many%d]\nvendor-id=15b3\nproduct-id=%04x\n'
                     'physical-network=net%d\n\n' % (i, i % 65536, i))
    for i in range(n - n // 2):
        parts.append('[alias many%d]\nvendor-id=15b3\nproduct-id=%04x\n\n' % (i, i % 65536))
    return ''.join(parts)


def measure(argv, stdin_path, env, kill_after=20):
    """Runs argv; kills it after kill_after seconds of wall time (longer
    under valgrind or a sanitizer, whose slowdown is theirs, not ours)."""
    with open(stdin_path, 'rb') as stdin:
        try:
            proc = subprocess.run(['/usr/bin/time', '-v'] + argv, stdin=stdin, env=env,
                                  capture_output=True, timeout=kill_after)
        except subprocess.TimeoutExpired:
            return (-1, '', 'did not finish in %d s\n' % kill_after, float(kill_after),
                    float(kill_after), 0)
    err = proc.stderr.decode('utf-8', 'replace')
    # /usr/bin/time appends its report to the command's stderr.
    cut = err.rfind('\tCommand being timed:')
    ours, report = err[:cut], err[cut:]
    ours = re.sub(r'Command exited with non-zero status \d+\n$', '', ours)
    rss = int(re.search(r'Maximum resident set size \(kbytes\): (\d+)', report).group(1))
    wall = re.search(r'Elapsed \(wall clock\) time \(h:mm:ss or m:ss\): (\S+)', report).group(1)
    seconds = 0.0
    for part in wall.split(':'):
        seconds = seconds * 60 + float(part)
    cpu = sum(float(re.search(r'%s time \(seconds\): (\S+)' % kind, report).group(1))
              for kind in ('User', 'System'))
    status = int(re.search(r'Exit status: (\d+)', report).group(1))
    return status, proc.stdout.decode('utf-8', 'replace'), ours, cpu, seconds, rss


def distances_runs(cli, data, tmp, env):
    """A guest of four cells with guest-numa on snc-4, sibling addresses to
    the bounds: place writes the devices, the 64-bit hole and the cells'
    distances into its own output, past the bounds: place must answer."""
    with open(os.path.join(data, 'guest-distances', 'snc-4-four-cells-by-hand.xml')) as f:
        text = f.read()

    def make(addrs):
        return text.replace('</devices>', "<controller type='usb'>%s</controller></devices>"
                            % addrs, 1)
    path = os.path.join(tmp, 'distances-at-bound.xml')
    with open(path, 'w') as f:
        f.write(make(GUEST_ADDRESS * at_bound(make, GUEST_ADDRESS)))
    host = [os.path.join(data, 'hosts', 'snc-4.' + ext) for ext in ('xml', 'conf')]
    # check judges the document before its placement: exit 1, its report
    return [('%s distances-at-bound' % cmd, os.path.getsize(path),
             [cli, cmd, '-c', 'test://' + host[0], '--config', host[1], path], '/dev/null', env,
             statuses) for cmd, statuses in (('place', (0,)), ('check', (0, 1)))]


def environment_runs(cli, hook, data, tmp, host, conf_text, env):
    """Runs of a hostile sysfs tree and of a huge configuration: (label,
    size, argv, stdin, env, the exit statuses allowed)."""
    runs = []
    domain_path = os.path.join(tmp, 'environment-domain.xml')
    with open(domain_path, 'w') as f:
        f.write(domain(PORT))
    size = os.path.getsize(domain_path)
    test_host = 'test://' + host

    root = os.path.join(tmp, 'sysfs-fifo')
    sysfs_fifo_tree(root)
    fifo_conf = os.path.join(tmp, 'sysfs-fifo.conf')
    with open(fifo_conf, 'w') as f:
        f.write(re.sub(r'(?m)^source=.*$', 'source=sysfs:' + root, conf_text))
    fifo_env = dict(env, VPA_CONFIG=fifo_conf)
    for op in ('prepare', 'restore'):
        runs.append(('hook %s sysfs-fifo' % op, size, [hook, 'guest', op, 'begin', '-'],
                     domain_path, fifo_env, (1,)))
    for cmd in ('pools', 'place'):
        argv = [cli, cmd, '-c', test_host, '--config', fifo_conf, '--inventory', 'sysfs:' + root]
        runs.append(('%s sysfs-fifo' % cmd, 0, argv + ([domain_path] if cmd == 'place' else []),
                     '/dev/null', env, (3,)))

    big_conf = os.path.join(tmp, 'many-groups.conf')
    with open(big_conf, 'w') as f:
        f.write(many_groups(conf_text, 20000))
    big_size = os.path.getsize(big_conf)
    big_env = dict(env, VPA_CONFIG=big_conf)
    for op in ('prepare', 'restore'):
        runs.append(('hook %s many-groups' % op, big_size, [hook, 'guest', op, 'begin', '-'],
                     domain_path, big_env, (0, 1)))
    for argv in (['pools'], ['place', domain_path], ['check', domain_path],
                 ['config', 'check']):
        label = '%s many-groups' % argv[0] if argv[0] != 'config' else 'config check many-groups'
        runs.append((label, big_size,
                     [cli] + argv[:1] + argv[1:2] * (argv[0] == 'config') +
                     ['-c', test_host, '--config', big_conf] + argv[1:] * (argv[0] != 'config'),
                     '/dev/null', env, (0, 1)))
    return runs


RESERVE_HEADER = '# virt-pci-affinity reservations 1\n'
RESERVE_FILE_MAX = 1024 * 1024  # plugin/vpa-reserve.h
RESERVE_MAX = 4096


def reservations_text(n, size):
    """n reservations (none of the guest's VF) in exactly size bytes, in
    descending address order (the reader sorts them): one-time-use
    devices of domains whose names are escapes, and quarantines whose
    reasons are, as every byte past ASCII is written."""
    lines = []
    for i in reversed(range(n)):
        addr = '0000:%02x:%02x.%x' % (i // 256, (i // 8) % 32, i % 8)
        if i % 2:
            lines.append('%s one-time-use 1718000000 6b1f3c5e-8a0e-4d55-9a43-0c2f0d6e0481 '
                         % addr)
        else:
            lines.append('%s quarantine 1718000000 ' % addr)
    room = size - len(RESERVE_HEADER) - sum(len(line) + 1 for line in lines)
    per, extra = divmod(room, n)
    out = [RESERVE_HEADER]
    for k, line in enumerate(lines):
        width = per + (1 if k < extra else 0)
        # '\303\251' (é) as g_strescape writes it, then plain letters
        fill = '\\303\\251' * (width // 8) + 'x' * (width % 8)
        out.append(line + fill + '\n')
    return ''.join(out)


def reservation_runs(cli, hook, data, tmp, host, conf_text, env):
    """The reservations file (docs/reservations.md) at its bounds (1 MiB,
    4096 reservations) and one byte or one reservation past them, read by
    the hook for every start and by the CLI's commands: the first is read
    (and its names are escapes, each decoded and escaped again), the
    others refused before any device is handed out."""
    runs = []
    domain_path = os.path.join(tmp, 'reserve-domain.xml')
    with open(domain_path, 'w') as f:
        f.write(domain(PORT))
    test_host = 'test://' + host
    files = [
        ('at its bounds', reservations_text(RESERVE_MAX, RESERVE_FILE_MAX), True),
        ('one byte past 1 MiB', reservations_text(RESERVE_MAX, RESERVE_FILE_MAX + 1), False),
        ('one reservation past 4096',
         reservations_text(RESERVE_MAX + 1, RESERVE_FILE_MAX - 4096), False),
    ]
    for i, (name, text, good) in enumerate(files):
        sdir = os.path.join(tmp, 'reserve-%d' % i)
        os.mkdir(sdir)
        with open(os.path.join(sdir, 'reservations'), 'w') as f:
            f.write(text)
        conf = os.path.join(sdir, 'hook.conf')
        with open(conf, 'w') as f:
            f.write(conf_text + '\n[hook]\nstate-dir=%s\n' % sdir)
        size = len(text)
        run_env = dict(env, VPA_CONFIG=conf)
        label = 'reservations %s' % name
        for op in ('prepare', 'restore'):
            runs.append(('hook %s, %s' % (op, label), size, [hook, 'guest', op, 'begin', '-'],
                         domain_path, run_env, (0,) if good else (1,)))
        for argv in (['check', domain_path], ['place', domain_path], ['pools']):
            runs.append(('%s, %s' % (argv[0], label), size,
                         [cli, argv[0], '-c', test_host, '--config', conf] + argv[1:],
                         '/dev/null', env, (0,) if good else (3,)))
        runs.append(('device list, %s' % label, size, [cli, 'device', 'list', '--config', conf],
                     '/dev/null', env, (0,) if good else (3,)))
        # never rewritten: a full file refuses another reservation
        runs.append(('device quarantine, %s' % label, size,
                     [cli, 'device', 'quarantine', '0000:81:10.0', '--reason', 'x',
                      '--config', conf], '/dev/null', env, (3,)))
    return runs


def main():
    cli, hook, data = sys.argv[1:4]
    # Under valgrind or a sanitizer the figures are the tool's, not ours:
    # the bounds are judged on the ordinary build only.
    wrapped = bool(os.environ.get('VPA_TEST_WRAPPER')) or bool(os.environ.get('ASAN_OPTIONS'))
    host = os.path.join(data, 'hook', 'hosts', 'two-node.xml')
    failures = 0
    n = 0
    with tempfile.TemporaryDirectory(prefix='vpa-amplification-') as tmp:
        conf = os.path.join(tmp, 'hook.conf')
        with open(os.path.join(data, 'hook', 'configs', 'two-node.conf')) as f:
            text = f.read().replace('@DATA@', data)
        with open(conf, 'w') as f:
            f.write(text)
        # The hook in its build tree honours VPA_CONFIG (docs/hook.md).
        env = {'PATH': '/usr/bin:/bin', 'LC_ALL': 'C', 'HOME': tmp, 'VPA_CONFIG': conf}
        runs = []
        for name, make in INPUTS:
            for ours in (True, False):
                for scale in (1, 10):
                    first = len(runs)
                    label = '%s%s x%d' % (name, '' if ours else ' (no metadata)', scale)
                    path = os.path.join(tmp, '%s-%d-%d.xml' % (name, ours, scale))
                    with open(path, 'w') as f:
                        f.write(make(PORT if ours else None, scale))
                    size = os.path.getsize(path)
                    for op in ('prepare', 'restore'):
                        runs.append(('hook %s %s' % (op, label), size,
                                     [hook, 'guest', op, 'begin', '-'], path, env))
                    runs.append(('check %s' % label, size,
                                 [cli, 'check', '-c', 'test://' + host, '--config', conf, path],
                                 '/dev/null', env))
                    runs.append(('place %s' % label, size,
                                 [cli, 'place', '-c', 'test://' + host, '--config', conf, path],
                                 '/dev/null', env))
                    statuses = (0,) if name in AT_BOUND and scale == 1 else (0, 1, 2)
                    runs[first:] = [r + (statuses,) for r in runs[first:]]
                    if not ours:
                        runs += [r + ((0, 1, 2),) for r in
                                 state_runs(tmp, data, hook, env, make, name, scale)]
        runs += distances_runs(cli, data, tmp, env)
        runs += environment_runs(cli, hook, data, tmp, host, text, env)
        runs += reservation_runs(cli, hook, data, tmp, host, text, env)
        runs = [r + (None,) for r in runs] + state_class_runs(tmp, data, hook, env)
        print('1..%d' % len(runs))
        for label, size, argv, stdin_path, run_env, statuses, check_out in runs:
            n += 1
            status, out, err, seconds, wall, rss = measure(argv, stdin_path, run_env,
                                                           600 if wrapped else 20)
            problems = []
            if check_out is not None and status == 0 and check_out(out) is not None:
                problems.append(check_out(out))
            lines = err.splitlines()
            # check's report is its answer, on stdout even with exit 1.
            if status != 0 and out != '' and not (label.startswith(('check', 'config check'))
                                                  and status == 1):
                problems.append('stdout not empty on failure')
            if status != 0 and len(lines) != 1:
                problems.append('%d lines on stderr' % len(lines))
            if len(err.encode()) > 1025:
                problems.append('stderr of %d bytes' % len(err.encode()))
            if label.startswith('check') and any(len(line.encode()) > 1024 for line in out.splitlines()):
                problems.append('a stdout line over 1 KiB')
            if status not in statuses:
                problems.append('exit status %d' % status)
            if not wrapped and seconds >= MAX_SECONDS:
                problems.append('%.2f s of CPU' % seconds)
            if not wrapped and wall >= MAX_WALL_SECONDS or status == -1:
                problems.append('%.2f s of wall time' % wall)
            if not wrapped and rss >= MAX_RSS_KIB:
                problems.append('%d KiB RSS' % rss)
            verdict = 'ok' if not problems else 'not ok'
            failures += bool(problems)
            print('%s %d - %s: %d bytes, exit %d, %.2f s CPU, %.2f s wall, %d KiB%s' %
                  (verdict, n, label, size, status, seconds, wall, rss,
                   ' (' + '; '.join(problems) + ')' if problems else ''))
            if problems or status != 0:
                print('# stderr: %s' % (lines[0][:300] if lines else ''))
    return 1 if failures else 0


if __name__ == '__main__':
    sys.exit(main())
