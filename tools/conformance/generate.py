#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Conformance scenarios with Nova's recorded outcome.

  generate.py nova-tests CASES.json > data/conformance/nova-tests.json
      Nova's own unit/functional test cases (docs/nova.md, "Nova's own
      tests", as JSON) translated into our scenario format.
  generate.py random COUNT SEED > data/conformance/random.json
      Random realistic hosts and domains.
  generate.py targeted COUNT SEED > data/conformance/targeted.json
      Random variations of the shapes where Nova's sequential consume
      fails (request order, pool-order fallback, PF/VF choice, filter
      order).

Every scenario then carries "nova": Nova's consume_requests result per
request (or its failure and why), computed by novarun.py. Run with
/usr/bin/python3 (python3-nova).
"""
import json
import os
import random
import re
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import novarun  # noqa: E402

POLICIES = ['legacy', 'required', 'preferred', 'socket']
HEX4 = re.compile(r'^[0-9a-fA-F]{4}$')


# --------------------------------------------------------------------------
# Nova's test cases
# --------------------------------------------------------------------------
class IdMap(object):
    """Nova's tests use ids like 'v1'; our devices need 4 hex digits."""

    def __init__(self):
        self.map = {}

    def __call__(self, v):
        if v is None or HEX4.match(v):
            return v
        return self.map.setdefault(v, 'f%03x' % (len(self.map) + 1))

    def spec(self, d):
        d = dict(d)
        for k in ('vendor_id', 'product_id'):
            if k in d and isinstance(d[k], str):
                d[k] = self(d[k])
        return d


def _alias_requests(case, ids):
    aliases = {}
    for a in case.get('alias', []):
        spec = {}
        for k, v in a.items():
            if k in ('vendor_id', 'product_id'):
                spec[k] = ids(v)
            elif k == 'device_type':
                spec['dev_type'] = v
        aliases.setdefault(a['name'], {'specs': [], 'policy': None})
        aliases[a['name']]['specs'].append(spec)
        if a.get('numa_policy'):
            aliases[a['name']]['policy'] = a['numa_policy']
    out = []
    for entry in case['flavor_alias'].split(','):
        name, count = entry.split(':')
        al = aliases[name.strip()]
        r = {'kind': 'alias', 'label': "alias '%s'" % name.strip(),
             'count': int(count), 'spec': al['specs']}
        if al['policy']:
            r['alias_policy'] = al['policy']
        out.append(r)
    return out


def resolve(sc, r):
    """Our precedence (vpa_policy_resolve); None on a conflict."""
    fl, im = sc.get('flavor_policy'), sc.get('image_policy')
    if fl and im and fl != im:
        return None
    for key, source in (('port_policy', 'port'), (None, 'flavor'),
                        (None, 'image'), ('alias_policy', 'alias')):
        v = r.get(key) if key else (fl if source == 'flavor' else im)
        if v:
            return v, source
    return 'legacy', 'default'


def convert_case(case, ids):
    sc = {'name': case['name'], 'origin': 'nova-tests'}
    if case.get('op') == 'fit':
        sc['skip'] = 'guest cell fitting: libvirt and the operator bind cells, not us'
        return sc
    devices = []
    for d in case['devices']:
        if d.get('dev_type') == 'vdpa':
            continue        # not a PCI hostdev: never in our inventory
        devices.append({'address': d['address'],
                        'vendor_id': ids(d['vendor_id']),
                        'product_id': ids(d['product_id']),
                        'dev_type': d.get('dev_type', 'type-PCI'),
                        'numa_node': d.get('numa_node'),
                        'parent_addr': d.get('parent_addr')})
    sc['devices'] = devices
    sc['host_cells'] = case.get('host_cells') or []
    if case.get('device_spec') is not None:
        sc['device_spec'] = [ids.spec(s) for s in case['device_spec']]
    sc['guest_nodes'] = case.get('guest_cells')
    fes = case.get('flavor_extra_specs', {}).get('hw:pci_numa_affinity_policy')
    ims = case.get('image_properties', {}).get('hw_pci_numa_affinity_policy')
    if fes:
        sc['flavor_policy'] = fes
    if ims:
        sc['image_policy'] = ims
    if 'flavor_alias' in case:
        reqs = _alias_requests(case, ids)
    else:
        reqs = []
        for i, r in enumerate(case.get('requests', [])):
            q = {'kind': 'alias', 'label': "request %d" % i,
                 'count': r['count'], 'spec': [ids.spec(s) for s in r['spec']]}
            if r.get('numa_policy'):
                q['alias_policy'] = r['numa_policy']
            reqs.append(q)
    if any(s.get('dev_type') == 'vdpa' for r in reqs for s in r['spec']):
        sc['skip'] = 'vDPA requests: vDPA devices are not PCI hostdevs'
        return sc
    sc['requests'] = reqs
    for p in (fes, ims):
        if p and p not in POLICIES:
            sc['nova'] = {'error': 'InvalidPCINUMAAffinity'}
            return sc
    for r in reqs:
        res = resolve(sc, r)
        if res is None:
            sc['nova'] = {'error': 'ImagePCINUMAPolicyForbidden'}
            return sc
        r['policy'], r['source'] = res
    sc['nova'] = novarun.nova_outcome(sc)
    expect = case.get('expect', {})
    if 'consume' in expect and case.get('op') in (None, 'consume', 'all'):
        got = sc['nova']['allocated']
        flat = None if got is None else [a for part in got for a in part]
        assert flat == expect['consume'], (case['name'], flat, expect)
    return sc


def nova_tests(path):
    ids = IdMap()
    return [convert_case(c, ids) for c in json.load(open(path))]


# --------------------------------------------------------------------------
# Random scenarios
# --------------------------------------------------------------------------
NICS = [('8086', '1528', '1515'), ('8086', '1592', '1889'),
        ('15b3', '101d', '101e'), ('8086', '1515', '1515')]
GPUS = [('10de', '1db4'), ('8086', '0443')]


def addr(dom, bus, slot, fn):
    return '%04x:%02x:%02x.%x' % (dom, bus, slot, fn)


def random_host(rnd):
    cells, node = [], 0
    for sock in range(rnd.choice([1, 2, 2, 3])):
        for _ in range(rnd.choice([1, 1, 2])):       # sub-NUMA clustering
            cells.append({'id': node, 'socket': sock})
            node += 1
    if rnd.random() < 0.12:                           # memory-only node
        cells.append({'id': node, 'socket': None})
    nodes = [c['id'] for c in cells]

    def numa():
        return None if rnd.random() < 0.15 else rnd.choice(nodes)

    devices, specs, physnets = [], [], []
    for n in range(rnd.randint(1, 4)):
        vendor, pf_prod, vf_prod = rnd.choice(NICS)
        bus, node_n = 0x40 + n * 2, numa()
        pf = addr(0, bus, 0, 0)
        nvf = rnd.choice([0, 2, 3, 4, 6, 8, 8])
        devices.append({'address': pf, 'vendor_id': vendor,
                        'product_id': pf_prod, 'dev_type': 'type-PF',
                        'numa_node': node_n, 'parent_addr': None,
                        'netdev': 'ens%df0' % n if rnd.random() < 0.5 else None})
        with_netdev = rnd.random() < 0.5
        for v in range(nvf):
            devices.append({'address': addr(0, bus + 1, v // 8, v % 8),
                            'vendor_id': vendor, 'product_id': vf_prod,
                            'dev_type': 'type-VF', 'numa_node': node_n,
                            'parent_addr': pf,
                            'netdev': ('ens%df0v%d' % (n, v)
                                       if with_netdev else None)})
        physnet = rnd.choice(['physnet1', 'physnet1', 'physnet2'])
        physnets.append(physnet)
        tags = {'physical_network': physnet}
        if rnd.random() < 0.2:
            tags['trusted'] = rnd.choice(['true', 'false'])
        if rnd.random() < 0.95:
            specs.append(dict({'address': pf}, **tags))
    for g in range(rnd.randint(0, 3)):
        vendor, prod = rnd.choice(GPUS)
        devices.append({'address': addr(0, 0x90 + g, 0, 0), 'vendor_id': vendor,
                        'product_id': prod, 'dev_type': 'type-PCI',
                        'numa_node': numa(), 'parent_addr': None})
    for vendor, prod in GPUS:
        specs.append({'vendor_id': vendor, 'product_id': prod})
    return cells, devices, specs, physnets


def random_requests(rnd, devices, physnets):
    reqs, ports = [], 0
    for _ in range(rnd.randint(1, 4)):
        kind = rnd.random()
        if kind < 0.55 and physnets:
            r = {'kind': 'port', 'label': "port 'ua-data%d'" % ports, 'count': 1}
            spec = {'physical_network': rnd.choice(physnets + [None] * 0),
                    'remote_managed': 'False'}
            if rnd.random() < 0.08:
                spec['dev_type'] = 'type-PF'
            if rnd.random() < 0.1:
                spec['trusted'] = rnd.choice(['true', 'false'])
            r['spec'] = [spec]
            if rnd.random() < 0.5:
                r['port_policy'] = rnd.choice(POLICIES)
            if rnd.random() < 0.2:
                r['pf_group'] = 'bond0'
            ports += 1
        else:
            pick = rnd.choice(devices)
            spec = {'vendor_id': pick['vendor_id'],
                    'product_id': pick['product_id']}
            if pick['dev_type'] == 'type-PF' and rnd.random() < 0.7:
                pick = dict(pick, dev_type='type-VF',
                            product_id=next(n[2] for n in NICS
                                            if n[1] == pick['product_id']))
                spec['product_id'] = pick['product_id']
            if rnd.random() < 0.6:
                spec['dev_type'] = pick['dev_type']
            r = {'kind': 'alias', 'label': "alias 'a%d'" % len(reqs),
                 'count': rnd.choice([1, 1, 1, 2, 2, 3]), 'spec': [spec]}
            if rnd.random() < 0.5:
                r['alias_policy'] = rnd.choice(POLICIES)
        reqs.append(r)
    return reqs


def random_scenario(rnd, i):
    cells, devices, specs, physnets = random_host(rnd)
    sc = {'name': 'random-%04d' % i, 'origin': 'random',
          'host_cells': cells, 'device_spec': specs, 'devices': devices,
          'sort_by_address': rnd.random() < 0.5}
    free = [d['address'] for d in devices]
    sc['claims'] = sorted(rnd.sample(free, min(len(free),
                                               rnd.choice([0, 0, 1, 2, 3]))))
    numa_nodes = [c['id'] for c in cells if c['socket'] is not None] or \
        [c['id'] for c in cells]
    if rnd.random() < 0.15:
        sc['guest_nodes'] = None
    else:
        sc['guest_nodes'] = sorted(rnd.sample(numa_nodes,
                                              min(len(numa_nodes),
                                                  rnd.choice([1, 1, 1, 2]))))
    if rnd.random() < 0.3:
        sc['flavor_policy'] = rnd.choice(POLICIES)
        if rnd.random() < 0.5:
            sc['image_policy'] = sc['flavor_policy']
    elif rnd.random() < 0.15:
        sc['image_policy'] = rnd.choice(POLICIES)
    sc['requests'] = random_requests(rnd, devices, physnets)
    for r in sc['requests']:
        r['policy'], r['source'] = resolve(sc, r)
        # Nova has no pf-group: record it, run Nova without it.
    sc['nova'] = novarun.nova_outcome(sc)
    return sc


def random_set(count, seed):
    rnd = random.Random(seed)
    return [random_scenario(rnd, i) for i in range(count)]


# --------------------------------------------------------------------------
# Targeted scenarios: where Nova's sequential consume is known to fail
# --------------------------------------------------------------------------
def _nic(devices, bus, node, nvf, pf_prod='1528', vf_prod='1515', netdev=None):
    pf = addr(0, bus, 0, 0)
    devices.append({'address': pf, 'vendor_id': '8086', 'product_id': pf_prod,
                    'dev_type': 'type-PF', 'numa_node': node,
                    'parent_addr': None, 'netdev': netdev})
    for v in range(nvf):
        devices.append({'address': addr(0, bus + 1, 0, v), 'vendor_id': '8086',
                        'product_id': vf_prod, 'dev_type': 'type-VF',
                        'numa_node': node, 'parent_addr': pf,
                        'netdev': (netdev + 'v%d' % v) if netdev else None})
    return pf


def _alias(label, count, spec, policy=None):
    r = {'kind': 'alias', 'label': "alias '%s'" % label, 'count': count,
         'spec': [spec]}
    if policy:
        r['alias_policy'] = policy
    return r


def targeted_scenario(rnd, i):
    cells = [{'id': 0, 'socket': 0}, {'id': 1, 'socket': 0},
             {'id': 2, 'socket': 1}, {'id': 3, 'socket': 1}]
    devices = []
    kind = i % 3
    vf = {'vendor_id': '8086', 'product_id': '1515', 'dev_type': 'type-VF'}
    if kind == 0:
        # A wide request listed first takes the affine VFs in pool order.
        k = rnd.randint(1, 2)
        buses = [0x40, 0x42]
        rnd.shuffle(buses)
        _nic(devices, buses[0], 0, k)
        _nic(devices, buses[1], rnd.choice([None, 1, 2]), rnd.randint(2, 5))
        reqs = [_alias('wide', k + rnd.randint(0, 1), vf,
                       rnd.choice(['legacy', 'preferred', 'socket'])),
                _alias('strict', 1, vf, 'required')]
    elif kind == 1:
        # VFs spread over PFs, then a PF request.
        n_pf, per = rnd.randint(2, 3), rnd.randint(2, 4)
        for p in range(n_pf):
            _nic(devices, 0x40 + 2 * p, 0, per,
                 netdev=('ens%d' % p) if rnd.random() < 0.5 else None)
        reqs = [_alias('vfs', rnd.randint(per - 1, per + 1), vf),
                _alias('pf', 1, {'vendor_id': '8086', 'product_id': '1528',
                                 'dev_type': 'type-PF'})]
        if rnd.random() < 0.5:
            reqs.reverse()
    else:
        # The affine node holds only a PF sharing the VFs' product id.
        _nic(devices, 0x40, 0, 0, pf_prod='1515')
        _nic(devices, 0x42, rnd.choice([None, 1]), rnd.randint(1, 3),
             pf_prod='1515')
        reqs = [_alias('vf', 1, {'vendor_id': '8086', 'product_id': '1515'},
                       rnd.choice(['legacy', 'preferred']))]
    sc = {'name': 'targeted-%04d' % i, 'origin': 'targeted',
          'host_cells': cells, 'device_spec': [{'vendor_id': '8086'}],
          'devices': devices, 'claims': [], 'guest_nodes': [0],
          'sort_by_address': rnd.random() < 0.5, 'requests': reqs}
    for r in reqs:
        r['policy'], r['source'] = resolve(sc, r)
    sc['nova'] = novarun.nova_outcome(sc)
    return sc


def targeted_set(count, seed):
    rnd = random.Random(seed)
    return [targeted_scenario(rnd, i) for i in range(count)]


def main(argv):
    if len(argv) == 3 and argv[1] == 'nova-tests':
        out = nova_tests(argv[2])
    elif len(argv) == 4 and argv[1] == 'random':
        out = random_set(int(argv[2]), int(argv[3]))
    elif len(argv) == 4 and argv[1] == 'targeted':
        out = targeted_set(int(argv[2]), int(argv[3]))
    else:
        sys.stderr.write(__doc__)
        return 2
    json.dump(out, sys.stdout, indent=1, sort_keys=True)
    sys.stdout.write('\n')
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
