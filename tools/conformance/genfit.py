#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Whole-guest NUMA fit scenarios with Nova's outcome and the brute force's.

  genfit.py DIR                 regenerate every family into DIR
                                (data/conformance/fit), fixed seeds
  genfit.py FAMILY COUNT SEED   one family as JSON on stdout
  genfit.py --summary DIR       the counts of the committed files

Families (FIT-FORMAT.md): exhaustive, shared, hugepages, threads, pci,
shapes, cache, tiers. Every scenario gets "nova" (novafit.py: Nova's own
numa_fit_instance_to_host with its PCI stats), "brute" (brutefit.py, no
Nova) and "compare" (the verdict of one against the other). Run with
/usr/bin/python3 (python3-nova).
"""
import itertools
import json
import os
import random
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import brutefit  # noqa: E402
import generate  # noqa: E402
import novafit  # noqa: E402
import novarun  # noqa: E402

# family: (count, seed); "exhaustive" is the full cross product.
FAMILIES = {
    'exhaustive': (None, 0),
    'shared': (160, 1201),
    'hugepages': (160, 1202),
    'threads': (200, 1203),
    'pci': (220, 1204),
    'shapes': (180, 1205),
    'cache': (200, 1206),
    'tiers': (150, 1207),
    'vswitch': (360, 1208),
    'emulator': (240, 1209),
}
GIB = 1024


# --------------------------------------------------------------------------
# Hosts and guests
# --------------------------------------------------------------------------
def host_cell(node, first_cpu, cores, threads=1, socket=0, memory_mb=16 * GIB,
              layout='dedicated', pinned=(), memory_used_mb=0, cpu_usage=0,
              mempages=None):
    """A host NUMA cell of cores x threads CPUs numbered from first_cpu;
    thread t of core c is first_cpu + t * cores + c (Linux's usual
    numbering: siblings are cores apart). layout: 'dedicated' (every CPU
    dedicated, none shared), 'shared' (the reverse), 'both' (every CPU
    in both sets, Nova's legacy vcpu_pin_set) or 'split' (the first half
    of the cores shared, the rest dedicated)."""
    sib = [[first_cpu + t * cores + c for t in range(threads)]
           for c in range(cores)]
    cpus = sorted(x for s in sib for x in s)
    if layout == 'dedicated':
        shared, dedicated = [], cpus
    elif layout == 'shared':
        shared, dedicated = cpus, []
    elif layout == 'both':
        shared, dedicated = cpus, cpus
    else:
        half = cores // 2
        shared = sorted(x for s in sib[:half] for x in s)
        dedicated = sorted(x for s in sib[half:] for x in s)
    c = {'id': node, 'socket': socket, 'cpus': cpus, 'memory_mb': memory_mb}
    if threads > 1:
        c['siblings'] = sib
    c['shared'], c['dedicated'] = shared, dedicated
    c['pinned'] = sorted(pinned)
    if memory_used_mb:
        c['memory_used_mb'] = memory_used_mb
    if cpu_usage:
        c['cpu_usage'] = cpu_usage
    if mempages is not None:
        c['mempages'] = mempages
    return c


def small_pages(memory_mb, huge_kb=0, used_mb=0):
    """The 4 KiB pages of a node: its memory less what hugepages hold."""
    return {'size_kb': 4, 'total': (memory_mb * 1024 - huge_kb) // 4,
            'used': used_mb * 256}


def guest(cells, policy='shared', thread=None, implicit=False):
    """cells: [(vcpus, memory_mb, pagesize)]; vCPUs numbered in order."""
    out, v = [], 0
    for n, mem, ps in cells:
        c = {'cpus': list(range(v, v + n)), 'memory_mb': mem}
        if ps is not None:
            c['pagesize'] = ps
        out.append(c)
        v += n
    g = {'cpu_policy': policy, 'cells': out}
    if thread:
        g['cpu_thread_policy'] = thread
    if implicit:
        g['implicit'] = True
    return g


def scenario(name, family, cells, g, **kw):
    sc = {'name': name, 'family': family, 'host_cells': cells, 'guest': g}
    sc.update(kw)
    # tests/place-scenario.c loads the PCI parts: they are always there.
    for k in ('devices', 'claims', 'requests'):
        sc.setdefault(k, [])
    for r in sc.get('requests', []):
        r['policy'], r['source'] = generate.resolve(sc, r)
    return sc


# --------------------------------------------------------------------------
# (a) exhaustive: every pinning (0-4 of 4 CPUs) of 3 host cells, 2 dedicated guest cells of 1-4 vCPUs
# --------------------------------------------------------------------------
def family_exhaustive(count, seed):
    out = []
    for pins in itertools.product(range(5), repeat=3):
        for a in range(1, 5):
            for b in range(1, 5):
                cells = [host_cell(i, 4 * i, 4, pinned=range(4 * i, 4 * i + k),
                                   memory_mb=8 * GIB)
                         for i, k in enumerate(pins)]
                name = 'exhaustive-p%d%d%d-g%d%d' % (pins + (a, b))
                out.append(scenario(name, 'exhaustive', cells,
                                    guest([(a, GIB, None), (b, GIB, None)],
                                          'dedicated')))
    return out


# --------------------------------------------------------------------------
# (b) shared CPUs, memory pressure, spread and pack
# --------------------------------------------------------------------------
def family_shared(count, seed):
    rnd = random.Random(seed)
    out = []
    for i in range(count):
        n = rnd.choice([2, 3, 4])
        mem = rnd.choice([8, 16, 32]) * GIB
        cells = []
        for node in range(n):
            used = rnd.choice([0, 0, 2, 4, 6, 8, 12, 14]) * GIB
            cells.append(host_cell(node, 8 * node, 8, socket=node // 2,
                                   memory_mb=mem, layout='shared',
                                   memory_used_mb=min(used, mem),
                                   cpu_usage=rnd.choice([0, 0, 2, 4, 8]),
                                   mempages=[small_pages(mem, used_mb=min(
                                       used, mem))]))
        ncells = rnd.randint(1, min(3, n))
        g = guest([(rnd.choice([1, 2, 2, 4, 4, 8, 10]),
                    rnd.choice([1, 2, 4, 6, 8, 12]) * GIB, None)
                   for _ in range(ncells)], 'shared',
                  implicit=(ncells == 1 and rnd.random() < 0.4))
        out.append(scenario(
            'shared-%03d' % i, 'shared', cells, g,
            cell_allocation=rnd.choice(['spread', 'pack']),
            limits={'cpu_allocation_ratio': rnd.choice([1.0, 4.0, 16.0]),
                    'ram_allocation_ratio': 1.0}))
    return out


# --------------------------------------------------------------------------
# (c) hugepages
# --------------------------------------------------------------------------
def family_hugepages(count, seed):
    rnd = random.Random(seed)
    out = []
    for i in range(count):
        n = rnd.choice([1, 2, 2, 4])
        cells = []
        for node in range(n):
            mem = 32 * GIB
            pages = []
            n2m = rnd.choice([0, 512, 1024, 2048, 4096])
            n1g = rnd.choice([0, 0, 2, 4, 8])
            huge_kb = n2m * 2048 + n1g * 1048576
            pages.append(small_pages(mem, huge_kb))
            if n2m:
                pages.append({'size_kb': 2048, 'total': n2m,
                              'used': rnd.choice([0, 0, n2m // 4, n2m // 2,
                                                  n2m]),
                              'reserved': rnd.choice([0, 0, 64])})
            if n1g:
                pages.append({'size_kb': 1048576, 'total': n1g,
                              'used': rnd.randint(0, n1g)})
            cells.append(host_cell(node, 8 * node, 8, socket=0,
                                   memory_mb=mem,
                                   layout=rnd.choice(['both', 'split']),
                                   mempages=pages))
        ncells = rnd.randint(1, n)
        policy = rnd.choice(['shared', 'dedicated'])
        cells_g = []
        for _ in range(ncells):
            ps = rnd.choice(['small', 'large', 'any', 2048, 1048576, None,
                             'large', 1048576])
            mem = rnd.choice([512, 1024, 1536, 2048, 3072, 4096, 8192])
            cells_g.append((rnd.choice([1, 2, 3]), mem, ps))
        # a guest's cells share one page size (one <memoryBacking>)
        ps0 = cells_g[0][2]
        cells_g = [(v, m, ps0) for v, m, _ in cells_g]
        out.append(scenario('hugepages-%03d' % i, 'hugepages', cells,
                            guest(cells_g, policy),
                            limits={'cpu_allocation_ratio': 16.0,
                                    'ram_allocation_ratio': 1.0}))
    return out


# --------------------------------------------------------------------------
# (d) thread policies
# --------------------------------------------------------------------------
def family_threads(count, seed):
    rnd = random.Random(seed)
    out = []
    for i in range(count):
        n = rnd.choice([1, 2, 2, 3])
        threads = rnd.choice([1, 2, 2, 2, 4]) if i % 5 else 1
        cores = rnd.choice([2, 3, 4])
        layout = rnd.choice(['both', 'both', 'both', 'dedicated'])
        cells = []
        for node in range(n):
            c = host_cell(node, node * cores * threads, cores, threads,
                          socket=node, layout=layout)
            c['pinned'] = sorted(rnd.sample(c['dedicated'], rnd.randint(
                0, len(c['dedicated']) // 2 + 1)))
            cells.append(c)
            cells[-1]['memory_mb'] = 16 * GIB
        ncells = rnd.randint(1, n)
        policy = rnd.choice(['prefer', 'isolate', 'require', 'require'])
        if i % 10 == 0:
            policy = 'require'          # on a host without SMT
        g = guest([(rnd.randint(1, cores * threads // 2 + 1), GIB, None)
                   for _ in range(ncells)], 'dedicated', thread=policy)
        out.append(scenario('threads-%03d' % i, 'threads', cells, g))
    return out


# --------------------------------------------------------------------------
# (e) PCI requests under each policy
# --------------------------------------------------------------------------
def _nic(devices, n, node, nvf, physnet):
    pf = generate.addr(0, 0x40 + 2 * n, 0, 0)
    devices.append({'address': pf, 'vendor_id': '8086', 'product_id': '1528',
                    'dev_type': 'type-PF', 'numa_node': node,
                    'parent_addr': None})
    for v in range(nvf):
        devices.append({'address': generate.addr(0, 0x41 + 2 * n, 0, v),
                        'vendor_id': '8086', 'product_id': '1515',
                        'dev_type': 'type-VF', 'numa_node': node,
                        'parent_addr': pf})
    return {'address': pf, 'physical_network': physnet}


def family_pci(count, seed):
    rnd = random.Random(seed)
    out = []
    for i in range(count):
        n = rnd.choice([2, 2, 3, 4])
        sockets = rnd.choice([1, 2]) if n > 1 else 1
        cells = []
        for node in range(n):
            free = rnd.choice([0, 2, 4, 4, 8, 8])
            cells.append(host_cell(
                node, 8 * node, 8, socket=node * sockets // n,
                layout='both', pinned=range(8 * node, 8 * node + 8 - free),
                memory_mb=16 * GIB,
                memory_used_mb=rnd.choice([0, 0, 0, 4, 12]) * GIB))
        if rnd.random() < 0.1:
            cells[-1]['socket'] = None
        devices, specs = [], []
        for k in range(rnd.randint(1, 3)):
            node = None if rnd.random() < 0.1 else rnd.randrange(n)
            specs.append(_nic(devices, k, node, rnd.choice([1, 2, 4]),
                              rnd.choice(['physnet1', 'physnet2'])))
        if rnd.random() < 0.4:
            gnode = None if rnd.random() < 0.15 else rnd.randrange(n)
            devices.append({'address': '0000:90:00.0', 'vendor_id': '10de',
                            'product_id': '1db4', 'dev_type': 'type-PCI',
                            'numa_node': gnode, 'parent_addr': None})
        specs.append({'vendor_id': '10de', 'product_id': '1db4'})
        vfs = [d['address'] for d in devices if d['dev_type'] == 'type-VF']
        claims = sorted(rnd.sample(vfs, min(len(vfs), rnd.choice([0, 0, 1,
                                                                    2]))))
        reqs = []
        physnets = sorted(set(s['physical_network'] for s in specs
                              if 'physical_network' in s))
        for p in range(rnd.randint(1, 3)):
            r = {'kind': 'port', 'label': "port 'ua-data%d'" % p, 'count': 1,
                 'spec': [{'physical_network': rnd.choice(physnets),
                           'remote_managed': 'False'}]}
            if rnd.random() < 0.8:
                r['port_policy'] = rnd.choice(generate.POLICIES)
            reqs.append(r)
        if any(d['vendor_id'] == '10de' for d in devices) and \
                rnd.random() < 0.6:
            reqs.append({'kind': 'alias', 'label': "alias 'gpu'", 'count': 1,
                         'spec': [{'vendor_id': '10de', 'product_id': '1db4'}],
                         'alias_policy': rnd.choice(generate.POLICIES)})
        ncells = rnd.randint(1, min(2, n))
        policy = rnd.choice(['shared', 'dedicated'])
        g = guest([(rnd.choice([1, 2, 4]), rnd.choice([2, 4, 8]) * GIB, None)
                   for _ in range(ncells)], policy,
                  implicit=(ncells == 1 and rnd.random() < 0.3))
        out.append(scenario('pci-%03d' % i, 'pci', cells, g,
                            device_spec=specs, devices=devices, claims=claims,
                            requests=reqs, sort_by_address=False,
                            limits={'cpu_allocation_ratio': 16.0,
                                    'ram_allocation_ratio': 1.0}))
    return out


# --------------------------------------------------------------------------
# (f) shapes: 1, 2, 4 nodes, 1-4 cells, implicit guests, mixed resources
# --------------------------------------------------------------------------
def family_shapes(count, seed):
    rnd = random.Random(seed)
    out = []
    for i in range(count):
        n = [1, 2, 4][i % 3]
        threads = rnd.choice([1, 2])
        cores = rnd.choice([2, 4])
        cells = []
        for node in range(n):
            mem = rnd.choice([4, 8, 16]) * GIB
            used = rnd.choice([0, 0, 1, 2, 4]) * GIB
            c = host_cell(node, node * cores * threads, cores, threads,
                          socket=node // 2, memory_mb=mem,
                          memory_used_mb=min(used, mem), layout='both',
                          mempages=[small_pages(mem, used_mb=min(used, mem))])
            c['pinned'] = sorted(rnd.sample(c['dedicated'], rnd.randint(
                0, len(c['dedicated']) // 2)))
            cells.append(c)
        ncells = rnd.randint(1, n)
        implicit = ncells == 1 and rnd.random() < 0.5
        policy = rnd.choice(['shared', 'dedicated'])
        g = guest([(rnd.randint(1, cores * threads),
                    rnd.choice([1, 2, 2, 4, 8]) * GIB, None)
                   for _ in range(ncells)], policy,
                  thread=rnd.choice([None, 'prefer']) if policy == 'dedicated'
                  else None, implicit=implicit)
        kw = {'limits': {'cpu_allocation_ratio': 16.0,
                         'ram_allocation_ratio': 1.0},
              'cell_allocation': rnd.choice(['spread', 'pack'])}
        if rnd.random() < 0.3 and n > 1:
            devices = []
            spec = _nic(devices, 0, rnd.randrange(n), 2, 'physnet1')
            kw.update(device_spec=[spec], devices=devices, claims=[],
                      sort_by_address=False,
                      requests=[{'kind': 'port', 'label': "port 'ua-data0'",
                                 'count': 1,
                                 'spec': [{'physical_network': 'physnet1',
                                           'remote_managed': 'False'}],
                                 'port_policy': rnd.choice(
                                     generate.POLICIES)}])
        out.append(scenario('shapes-%03d' % i, 'shapes', cells, g, **kw))
    return out


# --------------------------------------------------------------------------
# (h) device tiers: many mappings fit, their tiers differ
# --------------------------------------------------------------------------
def family_tiers(count, seed):
    rnd = random.Random(seed)
    out = []
    for i in range(count):
        n = rnd.choice([2, 3, 4, 4])
        cells = [host_cell(node, 8 * node, 8, socket=node // 2, layout='both',
                           pinned=range(8 * node, 8 * node + rnd.choice(
                               [0, 0, 2, 4, 6])), memory_mb=16 * GIB)
                 for node in range(n)]
        devices, specs = [], []
        for k in range(rnd.randint(1, 3)):
            node = None if rnd.random() < 0.15 else rnd.randrange(n)
            specs.append(_nic(devices, k, node, rnd.choice([1, 2, 3]),
                              'physnet1'))
        # devices nobody asks for: Nova's order counts them too
        if rnd.random() < 0.6:
            node = rnd.randrange(n)
            for f in range(rnd.randint(2, 6)):
                devices.append({'address': generate.addr(0, 0x90, 0, f),
                                'vendor_id': '10de', 'product_id': '1db4',
                                'dev_type': 'type-PCI', 'numa_node': node,
                                'parent_addr': None})
        specs.append({'vendor_id': '10de', 'product_id': '1db4'})
        reqs = [{'kind': 'port', 'label': "port 'ua-data%d'" % p, 'count': 1,
                 'spec': [{'physical_network': 'physnet1',
                           'remote_managed': 'False'}],
                 'port_policy': rnd.choice(['preferred', 'preferred', 'socket',
                                            'legacy'])}
                for p in range(rnd.randint(1, 3))]
        ncells = rnd.randint(1, min(2, n))
        policy = rnd.choice(['shared', 'dedicated'])
        g = guest([(rnd.choice([1, 2]), 2 * GIB, None)
                   for _ in range(ncells)], policy,
                  implicit=(ncells == 1 and rnd.random() < 0.3))
        out.append(scenario('tiers-%03d' % i, 'tiers', cells, g,
                            device_spec=specs, devices=devices, claims=[],
                            requests=reqs, sort_by_address=False,
                            cell_allocation=rnd.choice(['spread', 'pack']),
                            limits={'cpu_allocation_ratio': 16.0,
                                    'ram_allocation_ratio': 1.0}))
    return out


# --------------------------------------------------------------------------
# (i) vswitch: NUMA-aware vSwitch ports (docs/vswitch.md)
# --------------------------------------------------------------------------
def _affinity(rnd, n):
    """The nodes a network is served from: none, one or two."""
    k = rnd.choice([0, 1, 1, 1, 2])
    return sorted(rnd.sample(range(n), min(k, n)))


def family_vswitch(count, seed):
    rnd = random.Random(seed)
    out = []
    for i in range(count):
        n = rnd.choice([2, 2, 3, 4, 4])
        sockets = rnd.choice([1, 2])
        cells = [host_cell(node, 8 * node, 8, socket=node * sockets // n,
                           layout='both',
                           pinned=range(8 * node, 8 * node + rnd.choice(
                               [0, 0, 2, 4, 8])),
                           memory_mb=16 * GIB,
                           memory_used_mb=rnd.choice([0, 0, 4, 12]) * GIB)
                 for node in range(n)]
        for pn in ('physnet1', 'physnet2'):
            for node in _affinity(rnd, n):
                cells[node].setdefault('physnets', []).append(pn)
        for node in _affinity(rnd, n):
            cells[node]['tunneled'] = True
        ports = []
        for p in range(rnd.randint(1, 3)):
            port = {'device': 'ua-vhu%d' % p}
            if rnd.random() < 0.3:
                port['tunneled'] = True
            else:
                port['physnet'] = rnd.choice(['physnet1', 'physnet2'])
            # mostly Nova's own reading (hard), sometimes the project's
            # softer ones
            pol = rnd.choice([None, None, None, 'required', 'legacy',
                              'preferred', 'socket'])
            if pol:
                port['policy'] = pol
            ports.append(port)
        devices, specs, reqs = [], [], []
        if rnd.random() < 0.4:
            # SR-IOV ports whose physnet also has vSwitch affinity
            for k in range(rnd.randint(1, 2)):
                node = rnd.randrange(n)
                specs.append(_nic(devices, k, node, rnd.choice([1, 2]),
                                  'physnet1'))
            for p in range(rnd.randint(1, 2)):
                r = {'kind': 'port', 'label': "port 'ua-data%d'" % p,
                     'count': 1,
                     'spec': [{'physical_network': 'physnet1',
                               'remote_managed': 'False'}]}
                if rnd.random() < 0.5:
                    r['port_policy'] = rnd.choice(['required', 'legacy',
                                                   'preferred'])
                reqs.append(r)
        ncells = rnd.randint(1, min(2, n))
        policy = rnd.choice(['shared', 'dedicated'])
        g = guest([(rnd.choice([1, 2, 4]), rnd.choice([2, 4, 8]) * GIB, None)
                   for _ in range(ncells)], policy,
                  implicit=(ncells == 1 and rnd.random() < 0.3))
        out.append(scenario('vswitch-%03d' % i, 'vswitch', cells, g,
                            vswitch_ports=ports, device_spec=specs,
                            devices=devices, claims=[], requests=reqs,
                            sort_by_address=False,
                            limits={'cpu_allocation_ratio': 16.0,
                                    'ram_allocation_ratio': 1.0}))
    return out


# --------------------------------------------------------------------------
# (j) emulator: emulator_threads_policy share/isolate with and without
#     thread policies (docs/placement.md, "Emulator threads")
# --------------------------------------------------------------------------
def family_emulator(count, seed):
    rnd = random.Random(seed)
    out = []
    for i in range(count):
        n = rnd.choice([1, 2, 2, 3, 4])
        threads = rnd.choice([1, 1, 2, 2])
        cores = rnd.choice([2, 3, 4])
        layout = rnd.choice(['both', 'both', 'dedicated'])
        cells = []
        for node in range(n):
            c = host_cell(node, node * cores * threads, cores, threads,
                          socket=node, layout=layout)
            c['pinned'] = sorted(rnd.sample(c['dedicated'], rnd.randint(
                0, len(c['dedicated']) // 2 + 1)))
            cells.append(c)
        ncells = rnd.randint(1, n)
        g = guest([(rnd.randint(1, cores * threads // 2 + 1), GIB, None)
                   for _ in range(ncells)], 'dedicated',
                  thread=rnd.choice([None, 'prefer', 'isolate', 'require']),
                  implicit=(ncells == 1 and rnd.random() < 0.3))
        emu = rnd.choice([None, 'share', 'isolate', 'isolate'])
        if emu:
            g['emulator_threads_policy'] = emu
        out.append(scenario('emulator-%03d' % i, 'emulator', cells, g))
    return out


def net_reason(sc):
    """A mapping the brute force fits that Nova's reading of the network
    rule (every network hard) refuses: the port policy's deviation."""
    rules = brutefit.net_rules(sc)
    if not any(p in ('preferred', 'socket') for _, p, _ in rules):
        return None
    for m in sc['brute']['mappings']:
        if not brutefit.nova_net_ok(sc, m['cells']):
            return 'vswitch-policy'
    return None


# --------------------------------------------------------------------------
# (g) where Nova's fit caches bite: 3 dedicated cells on 4 nodes
# --------------------------------------------------------------------------
def family_cache(count, seed):
    rnd = random.Random(seed)
    out = []
    for i in range(count):
        pins = [rnd.randint(0, 4) for _ in range(4)]
        cells = [host_cell(n, 4 * n, 4, pinned=range(4 * n, 4 * n + k),
                           memory_mb=8 * GIB) for n, k in enumerate(pins)]
        sizes = [rnd.randint(1, 4) for _ in range(3)]
        name = 'cache-p%s-g%s' % (''.join(map(str, pins)),
                                  ''.join(map(str, sizes)))
        out.append(scenario('%s-%03d' % (name, i), 'cache', cells,
                            guest([(v, GIB, None) for v in sizes],
                                  'dedicated')))
    return out


# --------------------------------------------------------------------------
# Outcomes
# --------------------------------------------------------------------------
def pci_reason(sc):
    """Why Nova's PCI stats refuse every mapping its cell rule accepts,
    on the first such mapping the brute force fits: 'support' when
    Nova's compute claim (consume_requests) would succeed there but the
    scheduler's support_requests does not, else novarun's category of
    the claim's failure."""
    nv = sc['nova']
    for m in sc['brute']['mappings']:
        if all(h in nv['cell_fits'][g] for g, h in enumerate(m['cells'])):
            s = dict(sc, guest_nodes=m['cells'])
            if novarun.consume(s) is not None:
                return 'support'
            return novarun.classify_failure(s)
    return 'unknown'


def compare(sc):
    """How Nova's outcome relates to the brute force's."""
    nv, bf = sc['nova'], sc['brute']
    if nv['fits'] and not nv.get('valid', True):
        return {'verdict': 'nova-invalid',
                'category': 'fit-cache: a cached pair that Nova\'s rule refuses'}
    if nv['fits'] and not nv.get('pinning_valid', True):
        return {'verdict': 'nova-invalid',
                'category': 'fit-cache: a dedicated cell left unpinned or '
                            'pinned to another cell\'s CPUs'}
    if nv['fits'] and bf['fits']:
        if bf.get('nova_tier_cost') is None:
            return {'verdict': 'nova-only',
                    'category': 'Nova\'s mapping has no device assignment here'}
        return {'verdict': 'both-fit'}
    if not nv['fits'] and not bf['fits']:
        return {'verdict': 'both-fail'}
    if nv['fits']:
        return {'verdict': 'nova-only',
                'category': 'no mapping fits here'}
    if nv['mappings']:
        cat = 'fit-cache'
    elif net_reason(sc):
        cat = net_reason(sc)
    elif any(all(h in nv['cell_fits'][g] for g, h in enumerate(m['cells']))
             for m in bf['mappings']):
        cat = 'pci-' + pci_reason(sc)
    else:
        cat = 'cell-rule'
    return {'verdict': 'beats-nova', 'category': cat}


def outcome(sc):
    sc['nova'] = novafit.nova_fit(sc)
    # the PCI scenarios' names for the same facts (tests/place-scenario.c)
    sc['nova']['ok'] = sc['nova']['fits']
    sc['nova']['allocated'] = sc['nova'].get('pci_allocated')
    sc['brute'] = brutefit.brute_fit(sc)
    sc['compare'] = compare(sc)
    return sc


def family(name, count=None, seed=None):
    c0, s0 = FAMILIES[name]
    gen = globals()['family_' + name]
    return [outcome(sc) for sc in gen(c0 if count is None else count,
                                      s0 if seed is None else seed)]


# --------------------------------------------------------------------------
# A readable JSON: short values on one line, long ones one item a line
# --------------------------------------------------------------------------
FIRST = ['name', 'family', 'id', 'socket', 'address', 'cell_allocation',
         'limits', 'host_cells', 'guest', 'device_spec', 'devices', 'claims',
         'requests']
LAST = ['nova', 'brute', 'compare']


def _keys(d):
    first = [k for k in FIRST if k in d]
    last = [k for k in LAST if k in d]
    return first + sorted(k for k in d if k not in FIRST and k not in LAST) \
        + last


def dumps(v, indent=0, width=132):
    """JSON with scenario keys in reading order; a value on one line when
    it fits in width, else one item a line."""
    if isinstance(v, dict):
        flat = '{' + ', '.join(json.dumps(k) + ': ' + dumps(v[k], width=1 << 30)
                               for k in _keys(v)) + '}'
    else:
        flat = json.dumps(v, sort_keys=True)
    if len(flat) + indent <= width or not isinstance(v, (list, dict)) or \
            not v:
        return flat
    pad = ' ' * (indent + 1)
    if isinstance(v, list):
        items = [pad + dumps(x, indent + 1, width) for x in v]
        return '[\n' + ',\n'.join(items) + '\n' + ' ' * indent + ']'
    items = [pad + json.dumps(k) + ': ' + dumps(v[k], indent + 1, width)
             for k in _keys(v)]
    return '{\n' + ',\n'.join(items) + '\n' + ' ' * indent + '}'


def summary(scs):
    out = {}
    for sc in scs:
        c = sc['compare']
        key = c['verdict'] + (' (%s)' % c['category'] if 'category' in c
                              else '')
        out[key] = out.get(key, 0) + 1
    return out


def main(argv):
    if len(argv) == 2 and argv[1] not in FAMILIES:
        os.makedirs(argv[1], exist_ok=True)
        for name in FAMILIES:
            scs = family(name)
            with open(os.path.join(argv[1], name + '.json'), 'w') as f:
                f.write(dumps(scs) + '\n')
            print('%s: %d scenarios: %s' % (name, len(scs),
                                            json.dumps(summary(scs))))
        return 0
    if len(argv) == 3 and argv[1] == '--summary':
        for name in FAMILIES:
            scs = json.load(open(os.path.join(argv[2], name + '.json')))
            print('%s: %d scenarios: %s' % (name, len(scs),
                                            json.dumps(summary(scs))))
        return 0
    if len(argv) == 4 and argv[1] in FAMILIES:
        sys.stdout.write(dumps(family(argv[1], int(argv[2]), int(argv[3])))
                         + '\n')
        return 0
    sys.stderr.write(__doc__)
    return 2


if __name__ == '__main__':
    sys.exit(main(sys.argv))
