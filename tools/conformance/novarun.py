# SPDX-License-Identifier: LGPL-2.1-or-later
"""Run a conformance scenario through Nova's own PCI code (Zed).

A scenario (data/conformance/*.json, see docs/placement.md) describes a
host, its device specs, the devices other domains hold, the guest's host
NUMA nodes and the requests. nova_outcome() builds Nova's PciDeviceStats
the way nova-compute does and runs consume_requests (the compute claim)
and support_requests (the scheduler's view).

Needs the system interpreter with python3-nova: /usr/bin/python3.
"""
import copy
import itertools
import json
import logging

import nova.conf
from nova import exception
from nova import objects

objects.register_all()

from nova.pci import manager as pci_manager  # noqa: E402
from nova.pci import stats as pci_stats  # noqa: E402
from nova.pci import utils as pci_utils  # noqa: E402
from nova.pci import whitelist  # noqa: E402

CONF = nova.conf.CONF
CONF([], project='nova', default_config_files=[])
logging.disable(logging.CRITICAL)

# Nova asks sysfs which addresses are PFs (device_spec PF-address rule);
# answer from the scenario instead.
_PFS = set()
pci_utils.is_physical_function = (
    lambda d, b, s, f: '%s:%s:%s.%s' % (d, b, s, f) in _PFS)
pci_utils.get_function_by_ifname = lambda ifname: (None, False)


def unavailable(sc):
    """Addresses Nova would not pool: held devices and their relatives."""
    held = set(sc.get('claims', []))
    gone = set(held)
    by_addr = {d['address']: d for d in sc['devices']}
    for d in sc['devices']:
        parent = d.get('parent_addr')
        if d['address'] in held and parent:
            gone.add(parent)
        if parent in held:
            gone.add(d['address'])
    return gone & set(by_addr)


def nova_devices(sc):
    gone = unavailable(sc)
    netdev = {d['address']: d.get('netdev') for d in sc['devices']}
    out = []
    for d in sc['devices']:
        if d['address'] in gone:
            continue
        nd = {k: d.get(k) for k in ('address', 'vendor_id', 'product_id',
                                     'dev_type', 'numa_node', 'parent_addr')}
        nd.setdefault('dev_type', 'type-PCI')
        # Our inventory has no VPD; treat every device as having a serial.
        nd['capabilities'] = {'vpd': {'card_serial_number': 'SN-' + d['address']}}
        if (d.get('dev_type') == 'type-VF' and d.get('netdev')
                and netdev.get(d.get('parent_addr'))):
            nd['parent_ifname'] = netdev[d['parent_addr']]
        out.append(nd)
    return out


def _topology(cells):
    if not cells:
        return None
    return objects.NUMATopology(cells=[
        objects.NUMACell(
            id=c['id'], socket=c.get('socket'), cpuset=set(), pcpuset=set(),
            memory=0, cpu_usage=0, memory_usage=0, pinned_cpus=set(),
            siblings=[], mempages=[],
            network_metadata=objects.NetworkMetadata(physnets=set(),
                                                     tunneled=False))
        for c in cells])


def build_stats(sc, devices=None):
    global _PFS
    devs_in = nova_devices(sc) if devices is None else devices
    _PFS = set(d['address'] for d in sc['devices']
               if d.get('dev_type') == 'type-PF')
    specs = sc.get('device_spec') or [{}]
    CONF.set_override('device_spec', [json.dumps(s) for s in specs],
                      group='pci')
    dev_filter = whitelist.Whitelist(CONF.pci.device_spec)
    stats = pci_stats.PciDeviceStats(_topology(sc.get('host_cells')),
                                     dev_filter=dev_filter)
    devs = []
    for i, d in enumerate(devs_in):
        d = copy.deepcopy(d)
        d.update(compute_node_id=1,
                 label='label_%s_%s' % (d['vendor_id'], d['product_id']))
        if not dev_filter.device_assignable(d):
            continue
        obj = objects.PciDevice.create(None, d)
        obj.id = i + 1
        devs.append(obj)
    order = list(devs)
    pci_manager.PciDevTracker._build_device_tree(devs)
    for dev in (devs if sc.get('sort_by_address') else order):
        stats.add_device(dev)
    return stats


def nova_requests(sc, order=None, split=False):
    reqs = []
    idx = list(range(len(sc['requests']))) if order is None else order
    for i in idx:
        r = sc['requests'][i]
        kw = dict(count=r['count'], spec=copy.deepcopy(r['spec']),
                  alias_name=r.get('label'))
        if r.get('source') != 'default' or r.get('kind') == 'alias':
            kw['numa_policy'] = r['policy']
        if split and r['count'] > 1:
            for _ in range(r['count']):
                reqs.append((i, objects.InstancePCIRequest(**dict(kw, count=1))))
        else:
            reqs.append((i, objects.InstancePCIRequest(**kw)))
    return reqs


def _cells(sc):
    nodes = sc.get('guest_nodes')
    if nodes is None:
        return None
    return [objects.InstanceNUMACell(id=n, cpuset=set(), pcpuset=set(),
                                     memory=0) for n in nodes]


def consume(sc, order=None, split=False, devices=None):
    """Per-request allocated addresses (scenario request order), or None."""
    stats = build_stats(sc, devices)
    pairs = nova_requests(sc, order, split)
    try:
        got = stats.consume_requests([r for _, r in pairs], _cells(sc))
    except exception.PciDeviceRequestFailed:
        return None
    out = [[] for _ in sc['requests']]
    k = 0
    for i, r in pairs:
        out[i].extend(d.address for d in got[k:k + r.count])
        k += r.count
    return out


def support(sc):
    stats = build_stats(sc)
    return bool(stats.support_requests(
        [r for _, r in nova_requests(sc)], _cells(sc)))


def _drop_unrequested(sc):
    """Nova's devices minus those its later filters throw away for every
    request: unrequested PFs and remote-managed devices."""
    want_pf = any(s.get('dev_type') == 'type-PF'
                  for r in sc['requests'] for s in r['spec'])
    devs = nova_devices(sc)
    if not want_pf:
        devs = [d for d in devs if d['dev_type'] != 'type-PF']
    return devs


def classify_failure(sc):
    """Why Nova fails where a whole-domain assignment exists."""
    if any(r['count'] == 0 for r in sc['requests']):
        return 'count-zero'
    if consume(sc, devices=_drop_unrequested(sc)) is not None:
        return 'filter-order'
    n = len(sc['requests'])
    if 1 < n <= 5:
        for perm in itertools.permutations(range(n)):
            if consume(sc, order=list(perm)) is not None:
                return 'request-order'
    if any(r['count'] > 1 for r in sc['requests']):
        if consume(sc, split=True) is not None:
            return 'pool-order-fallback'
    if any(s.get('dev_type') == 'type-PF'
           for r in sc['requests'] for s in r['spec']):
        return 'pf-vf-choice'
    return 'joint-assignment'


def nova_outcome(sc):
    alloc = consume(sc)
    out = {'ok': alloc is not None, 'allocated': alloc,
           'support': support(sc)}
    if alloc is None:
        out['failure_category'] = classify_failure(sc)
    return out
