#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Times Nova's own PCI code on a benchmark host, for docs/benchmarks.md.

Run with /usr/bin/python3 (python3-nova lives in Debian's dist-packages):

    /usr/bin/python3 bench/nova-bench.py SCENARIO.json

SCENARIO (written by bench/run):

  snapshot      host snapshot (our test-driver format); devices, claims
                and the host NUMA cells are read from it, untimed
  device_spec   [pci] device_spec entries (dicts)
  alias         [pci] alias entries (dicts)
  flavor_alias  "NAME:COUNT,..." (pci_passthrough:alias)
  ports         [{"device": ..., "physnet": ..., "policy": ...|null}]: one
                InstancePCIRequest each, as Nova builds them for SR-IOV
                ports (vnic_type direct)
  guest_nodes   host NUMA nodes of the guest cells
  runs          timed repetitions

What is timed, per run, after the imports and with every input already in
memory (fresh copies made outside the clock): the device dicts filtered by
the whitelist, turned into PciDevice objects, linked into the PF/VF tree,
added to a new PciDeviceStats ("build"), then consume_requests of all
requests ("consume"). Devices a domain holds are left out, as Nova's
tracker leaves allocated devices out of its pools, and so are PFs with a
held VF (unavailable in Nova).

Prints one JSON object: per-run times in ns and the devices the last run
chose.
"""
import copy
import json
import logging
import sys
import time
import uuid
import xml.etree.ElementTree as ET

import nova.conf
from nova import objects

objects.register_all()

from nova.objects import fields  # noqa: E402
from nova.pci import manager as pci_manager  # noqa: E402
from nova.pci import request as pci_request  # noqa: E402
from nova.pci import stats as pci_stats  # noqa: E402
from nova.pci import utils as pci_utils  # noqa: E402
from nova.pci import whitelist  # noqa: E402

CONF = nova.conf.CONF
CONF([], project='nova', default_config_files=[])
logging.disable(logging.CRITICAL)

# Nova's device_spec asks sysfs whether an address is a PF; answer from
# the snapshot instead, so nothing depends on the machine.
_PFS = set()
pci_utils.is_physical_function = (
    lambda d, b, s, f: '%s:%s:%s.%s' % (d, b, s, f) in _PFS)
pci_utils.get_function_by_ifname = lambda ifname: (None, False)


def _addr(el):
    return '%04x:%02x:%02x.%x' % tuple(
        int(el.get(k), 16) for k in ('domain', 'bus', 'slot', 'function'))


def _device(el):
    cap = el.find("capability[@type='pci']")
    if cap is None:
        return None
    d = {
        'address': '%04x:%02x:%02x.%x' % tuple(
            int(cap.findtext(k)) for k in ('domain', 'bus', 'slot',
                                           'function')),
        'vendor_id': cap.find('vendor').get('id')[2:],
        'product_id': cap.find('product').get('id')[2:],
        'dev_type': fields.PciDeviceType.STANDARD,
        'parent_addr': None,
        'numa_node': None,
    }
    numa = cap.find('numa')
    if numa is not None and int(numa.get('node')) >= 0:
        d['numa_node'] = int(numa.get('node'))
    if cap.find("capability[@type='virt_functions']") is not None:
        d['dev_type'] = fields.PciDeviceType.SRIOV_PF
    pf = cap.find("capability[@type='phys_function']/address")
    if pf is not None:
        d['dev_type'] = fields.PciDeviceType.SRIOV_VF
        d['parent_addr'] = _addr(pf)
    d['label'] = 'label_%s_%s' % (d['vendor_id'], d['product_id'])
    d['compute_node_id'] = 1
    return d


def load_snapshot(path):
    """Device dicts, held addresses and host cells [{id, socket}]."""
    devices, held, cells = [], set(), []
    for _, el in ET.iterparse(path):
        if el.tag == 'device':
            d = _device(el)
            if d is not None:
                devices.append(d)
            el.clear()
        elif el.tag == 'domain' and el.get('type') is not None:
            for a in el.iterfind('devices/*/source/address'):
                held.add(_addr(a))
            el.clear()
        elif el.tag == 'cell' and el.find('cpus') is not None:
            sockets = {c.get('socket_id') for c in el.iterfind('cpus/cpu')}
            cells.append({'id': int(el.get('id')),
                          'socket': (int(sockets.pop())
                                     if len(sockets) == 1 and None not in sockets
                                     else None)})
    return devices, held, cells


def free_devices(devices, held):
    """Drops held devices and PFs with a held VF (Nova: unavailable)."""
    busy_pfs = {d['parent_addr'] for d in devices if d['address'] in held}
    return [d for d in devices
            if d['address'] not in held and d['address'] not in busy_pfs]


def host_topology(cells):
    return objects.NUMATopology(cells=[
        objects.NUMACell(
            id=c['id'], socket=c['socket'], cpuset=set(), pcpuset=set(),
            memory=0, cpu_usage=0, memory_usage=0, pinned_cpus=set(),
            siblings=[], mempages=[],
            network_metadata=objects.NetworkMetadata(physnets=set(),
                                                     tunneled=False))
        for c in cells])


def requests(sc):
    CONF.set_override('alias', [json.dumps(a) for a in sc['alias']],
                      group='pci')
    flavor = objects.Flavor(
        vcpus=1, memory_mb=512,
        extra_specs={'pci_passthrough:alias': sc['flavor_alias']})
    reqs = list(pci_request.get_pci_requests_from_flavor(flavor).requests)
    names = {}
    for r in reqs:
        r.request_id = str(uuid.uuid4())
        names[r.request_id] = 'alias ' + r.alias_name
    for p in sc['ports']:
        rid = str(uuid.uuid4())
        names[rid] = 'port ' + p['device']
        kw = dict(count=1, request_id=rid,
                  spec=[{pci_request.PCI_NET_TAG: p['physnet'],
                         pci_request.PCI_REMOTE_MANAGED_TAG: 'False'}])
        if p.get('policy'):
            kw['numa_policy'] = p['policy']
        reqs.append(objects.InstancePCIRequest(**kw))
    return reqs, names


def build_and_consume(devs, dev_filter, topology, reqs, cells):
    t0 = time.perf_counter_ns()
    objs = []
    for i, d in enumerate(devs):
        if not dev_filter.device_assignable(d):
            continue
        obj = objects.PciDevice.create(None, d)
        obj.id = i + 1
        objs.append(obj)
    order = list(objs)
    pci_manager.PciDevTracker._build_device_tree(objs)
    stats = pci_stats.PciDeviceStats(topology, dev_filter=dev_filter)
    for dev in order:
        stats.add_device(dev)
    t1 = time.perf_counter_ns()
    chosen = stats.consume_requests(reqs, cells)
    t2 = time.perf_counter_ns()
    if chosen is None:
        raise SystemExit('nova-bench: consume_requests found no devices')
    return t1 - t0, t2 - t1, chosen


def main(argv):
    with open(argv[1]) as f:
        sc = json.load(f)
    devices, held, cells = load_snapshot(sc['snapshot'])
    _PFS.update(d['address'] for d in devices
                if d['dev_type'] == fields.PciDeviceType.SRIOV_PF)
    devices = free_devices(devices, held)
    CONF.set_override('device_spec',
                      [json.dumps(s) for s in sc['device_spec']], group='pci')
    dev_filter = whitelist.Whitelist(CONF.pci.device_spec)
    topology = host_topology(cells)
    guest = [objects.InstanceNUMACell(id=n, cpuset=set(), pcpuset=set(),
                                      memory=0) for n in sc['guest_nodes']]

    out = {'devices': len(devices), 'build_ns': [], 'consume_ns': [],
           'total_ns': []}
    for _ in range(sc['runs']):
        devs = copy.deepcopy(devices)
        reqs, names = requests(sc)
        build, consume, chosen = build_and_consume(devs, dev_filter, topology,
                                                   reqs, guest)
        out['build_ns'].append(build)
        out['consume_ns'].append(consume)
        out['total_ns'].append(build + consume)
    out['requests'] = len(reqs)
    out['chosen'] = [{'request': names[d.request_id], 'address': d.address,
                      'numa_node': d.numa_node} for d in chosen]
    json.dump(out, sys.stdout)
    sys.stdout.write('\n')


if __name__ == '__main__':
    main(sys.argv)
