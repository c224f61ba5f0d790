#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Times Nova's numa_fit_instance_to_host on a benchmark host.

Run with /usr/bin/python3 (python3-nova lives in Debian's dist-packages):

    /usr/bin/python3 bench/nova-fit-bench.py SCENARIO.json

SCENARIO (written by bench/run, or by hand):

  snapshot      host snapshot (our test-driver format): devices, held
                devices and the NUMA cells (CPUs with their thread
                siblings and socket, memory, pages) are read from it,
                untimed
  device_spec, alias, flavor_alias, ports
                the PCI requests, as for bench/nova-bench.py
  cases         [{"name": ..., "cells": N, "vcpus": per cell,
                  "memory_mb": per cell, "cpu_policy": "dedicated"|"shared",
                  "extra_alias_count": n (optional: add a `required`
                  request of n more alias devices, so that no mapping can
                  fit and Nova walks its permutations)}]
  timeout_s     give up a case after this many seconds (default 60)
  runs          timed repetitions of a case that finishes (default 3)

Every CPU is both shared and dedicated (Nova's legacy vcpu_pin_set
configuration), none pinned; memory and 4 KiB pages as the snapshot says.
The PCI stats are built once, outside the clock, from the free devices;
what is timed is numa_fit_instance_to_host(host, guest, pci_requests,
pci_stats) on fresh copies of the host and guest topologies, as the
scheduler's NUMA filter calls it.

Prints one JSON object: per case, "fits", the host cells chosen, the
times in ns and "support_calls" (how many mappings reached Nova's PCI
check, i.e. passed the CPU and memory checks), or "timeout": true when
it did not finish within timeout_s.
"""
import copy
import importlib.util
import json
import os
import signal
import sys
import time
import xml.etree.ElementTree as ET

HERE = os.path.dirname(os.path.abspath(__file__))
_spec = importlib.util.spec_from_file_location(
    'nova_bench', os.path.join(HERE, 'nova-bench.py'))
nb = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(nb)

from nova import objects  # noqa: E402
from nova.objects import fields  # noqa: E402
from nova.pci import manager as pci_manager  # noqa: E402
from nova.pci import stats as pci_stats  # noqa: E402
from nova.pci import whitelist  # noqa: E402
from nova.virt import hardware  # noqa: E402


class Timeout(Exception):
    pass


def _alarm(signum, frame):
    raise Timeout()


def load_cells(path):
    """[{id, socket, cpus, siblings, memory_mb, pages}] of the snapshot."""
    cells = []
    for _, el in ET.iterparse(path):
        if el.tag == 'cell' and el.find('cpus') is not None:
            cpus, sibs, sockets = [], {}, set()
            for c in el.iterfind('cpus/cpu'):
                cpus.append(int(c.get('id')))
                sockets.add(c.get('socket_id'))
                s = c.get('siblings') or c.get('id')
                sibs[s] = sorted(int(x) for x in hardware.parse_cpu_spec(s))
            mem_kib = int(el.findtext('memory'))
            pages = [(int(p.get('size')), int(p.text))
                     for p in el.iterfind('pages')]
            cells.append({'id': int(el.get('id')),
                          'socket': (int(sockets.pop()) if len(sockets) == 1
                                     and None not in sockets else None),
                          'cpus': sorted(cpus),
                          'siblings': sorted(sibs.values()),
                          'memory_mb': mem_kib // 1024,
                          'pages': pages or [(4, mem_kib // 4)]})
        elif el.tag in ('device', 'domain'):
            el.clear()
    return cells


def host_topology(cells):
    return objects.NUMATopology(cells=[
        objects.NUMACell(
            id=c['id'], socket=c['socket'], cpuset=set(c['cpus']),
            pcpuset=set(c['cpus']), memory=c['memory_mb'], cpu_usage=0,
            memory_usage=0, pinned_cpus=set(),
            siblings=[set(s) for s in c['siblings']],
            mempages=[objects.NUMAPagesTopology(size_kb=size, total=n, used=0)
                      for size, n in c['pages']],
            network_metadata=objects.NetworkMetadata(physnets=set(),
                                                     tunneled=False))
        for c in cells])


def guest_topology(case):
    dedicated = case.get('cpu_policy', 'dedicated') == 'dedicated'
    cells, v = [], 0
    for i in range(case['cells']):
        cpus = set(range(v, v + case['vcpus']))
        v += case['vcpus']
        cells.append(objects.InstanceNUMACell(
            id=i, memory=case['memory_mb'],
            cpuset=set() if dedicated else cpus,
            pcpuset=cpus if dedicated else set(),
            cpu_policy=(fields.CPUAllocationPolicy.DEDICATED if dedicated
                        else fields.CPUAllocationPolicy.SHARED)))
    return objects.InstanceNUMATopology(cells=cells)


def build_stats(devices, dev_filter, topology):
    objs = []
    for i, d in enumerate(copy.deepcopy(devices)):
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
    return stats


def run_case(sc, case, host, stats, timeout):
    reqs, _ = nb.requests(sc)
    if case.get('extra_alias_count'):
        a = sc['alias'][0]
        reqs.append(objects.InstancePCIRequest(
            count=case['extra_alias_count'], numa_policy='required',
            spec=[{'vendor_id': a['vendor_id'], 'product_id': a['product_id'],
                   'dev_type': a['device_type']}]))
    out = {'name': case['name'], 'cells': case['cells'], 'requests': len(reqs),
           'ns': []}
    calls = [0]
    support = type(stats).support_requests

    def counting(requests, numa_cells=None):
        calls[0] += 1
        return support(stats, requests, numa_cells)

    stats.support_requests = counting
    for _ in range(sc.get('runs', 3)):
        calls[0] = 0
        h, g = copy.deepcopy(host), guest_topology(case)
        signal.alarm(timeout)
        t0 = time.perf_counter_ns()
        try:
            fitted = hardware.numa_fit_instance_to_host(
                h, g, pci_requests=reqs, pci_stats=stats)
        except Timeout:
            out['timeout'] = True
            out['timeout_s'] = timeout
            out['support_calls'] = calls[0]
            return out
        finally:
            signal.alarm(0)
            del stats.support_requests
        out['ns'].append(time.perf_counter_ns() - t0)
        out['support_calls'] = calls[0]
        stats.support_requests = counting
        out['fits'] = fitted is not None
        out['host_cells'] = [c.id for c in fitted.cells] if fitted else None
    return out


def main(argv):
    with open(argv[1]) as f:
        sc = json.load(f)
    devices, held, _ = nb.load_snapshot(sc['snapshot'])
    nb._PFS.update(d['address'] for d in devices
                   if d['dev_type'] == fields.PciDeviceType.SRIOV_PF)
    devices = nb.free_devices(devices, held)
    cells = load_cells(sc['snapshot'])
    nb.CONF.set_override('device_spec',
                         [json.dumps(s) for s in sc['device_spec']],
                         group='pci')
    dev_filter = whitelist.Whitelist(nb.CONF.pci.device_spec)
    host = host_topology(cells)
    stats = build_stats(devices, dev_filter, host)
    signal.signal(signal.SIGALRM, _alarm)
    out = {'nodes': len(cells), 'devices': len(devices),
           'cpus_per_node': len(cells[0]['cpus']) if cells else 0,
           'cases': [run_case(sc, c, host, stats, sc.get('timeout_s', 60))
                     for c in sc['cases']]}
    json.dump(out, sys.stdout)
    sys.stdout.write('\n')
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
