# SPDX-License-Identifier: LGPL-2.1-or-later
"""Run a whole-guest fit scenario through Nova's own NUMA code (Zed).

A fit scenario (data/conformance/fit/*.json, tools/conformance/FIT-FORMAT.md)
describes host NUMA cells (CPUs, thread siblings, shared and dedicated
sets, pinned CPUs, memory, pages), a guest (cells, CPU policy, thread
policy, page size) and, optionally, PCI devices and requests in the
format of the PCI scenarios (novarun.py builds Nova's PciDeviceStats from
them). nova_fit() builds Nova's NUMATopology / InstanceNUMATopology
objects and runs hardware.numa_fit_instance_to_host() with the PCI
requests and stats, as the scheduler's NUMATopologyFilter does, then
records what Nova chose; it also runs Nova's per-cell rule
(_numa_fit_instance_cell) on every pair and every permutation without
the loop's caches, to tell why Nova missed a fit.

Needs the system interpreter with python3-nova: /usr/bin/python3.
"""
import copy
import itertools

import novarun  # noqa: F401  (configures Nova, registers its objects)
from nova import exception
from nova import objects
from nova.objects import fields
from nova.virt import hardware

PAGESIZES = {'small': hardware.MEMPAGES_SMALL,
             'large': hardware.MEMPAGES_LARGE,
             'any': hardware.MEMPAGES_ANY}
EMULATOR = {'share': fields.CPUEmulatorThreadsPolicy.SHARE,
            'isolate': fields.CPUEmulatorThreadsPolicy.ISOLATE}
THREADS = {'prefer': fields.CPUThreadAllocationPolicy.PREFER,
           'isolate': fields.CPUThreadAllocationPolicy.ISOLATE,
           'require': fields.CPUThreadAllocationPolicy.REQUIRE}


def siblings(c):
    """Thread sibling sets; by default every CPU is a core of its own."""
    if c.get('siblings') is not None:
        return c['siblings']
    return [[x] for x in c.get('cpus', [])]


def host_topology(sc):
    cells = []
    for c in sc['host_cells']:
        cells.append(objects.NUMACell(
            id=c['id'], socket=c.get('socket'),
            cpuset=set(c.get('shared', [])),
            pcpuset=set(c.get('dedicated', [])),
            memory=c.get('memory_mb', 0),
            cpu_usage=c.get('cpu_usage', 0),
            memory_usage=c.get('memory_used_mb', 0),
            pinned_cpus=set(c.get('pinned', [])),
            siblings=[set(s) for s in siblings(c)],
            mempages=[objects.NUMAPagesTopology(
                size_kb=p['size_kb'], total=p['total'], used=p.get('used', 0),
                reserved=p.get('reserved', 0)) for p in c.get('mempages', [])],
            network_metadata=objects.NetworkMetadata(
                physnets=set(c.get('physnets', [])),
                tunneled=bool(c.get('tunneled', False)))))
    return objects.NUMATopology(cells=cells)


def instance_topology(sc):
    g = sc['guest']
    dedicated = g.get('cpu_policy') == 'dedicated'
    cells = []
    for i, c in enumerate(g['cells']):
        cpus = set(c['cpus'])
        kw = dict(id=i, memory=c['memory_mb'],
                  cpuset=set() if dedicated else cpus,
                  pcpuset=cpus if dedicated else set(),
                  cpu_policy=(fields.CPUAllocationPolicy.DEDICATED if dedicated
                              else fields.CPUAllocationPolicy.SHARED))
        if dedicated:
            kw['cpu_thread_policy'] = THREADS[g.get('cpu_thread_policy') or
                                              'prefer']
        ps = c.get('pagesize')
        if ps is not None:
            kw['pagesize'] = PAGESIZES.get(ps, ps)
        cells.append(objects.InstanceNUMACell(**kw))
    emu = g.get('emulator_threads_policy')
    if emu is None:
        return objects.InstanceNUMATopology(cells=cells)
    return objects.InstanceNUMATopology(
        cells=cells, emulator_threads_policy=EMULATOR[emu])


def network_metadata(sc):
    """Nova's NetworkMetadata of the guest's ports, as neutron.py builds
    it (_get_physnet_tunneled_info): the physnets of every port, vSwitch
    (vswitch_ports) or SR-IOV (a port request's physical_network), and
    tunneled when a port is on an overlay network. None without
    vswitch_ports (the other families)."""
    if 'vswitch_ports' not in sc:
        return None
    physnets = {p['physnet'] for p in sc['vswitch_ports']
                if not p.get('tunneled')}
    for r in sc.get('requests') or []:
        pn = (r.get('spec') or [{}])[0].get('physical_network')
        if r.get('kind') == 'port' and pn:
            physnets.add(pn)
    return objects.NetworkMetadata(
        physnets=physnets,
        tunneled=any(p.get('tunneled') for p in sc['vswitch_ports']))


def limits(sc):
    lim = sc.get('limits')
    net = network_metadata(sc)
    if not lim:
        return None if net is None else objects.NUMATopologyLimits(
            cpu_allocation_ratio=16.0, ram_allocation_ratio=1.0,
            network_metadata=net)
    kw = {} if net is None else {'network_metadata': net}
    return objects.NUMATopologyLimits(
        cpu_allocation_ratio=lim['cpu_allocation_ratio'],
        ram_allocation_ratio=lim['ram_allocation_ratio'], **kw)


def _set_strategy(sc):
    novarun.CONF.set_override(
        'packing_host_numa_cells_allocation_strategy',
        sc.get('cell_allocation', 'spread') == 'pack', group='compute')


def _pci(sc):
    """(requests, stats) as the scheduler passes them: stats always."""
    sc = dict(sc, devices=sc.get('devices', []))
    stats = novarun.build_stats(sc)
    reqs = [r for _, r in novarun.nova_requests(sc)] if sc.get('requests') \
        else []
    return reqs, stats


def _reserved(inst, index):
    """Nova's cpuset_reserved for the guest cell at index: 1 on the first
    with emulator threads isolated (numa_fit_instance_to_host)."""
    return 1 if inst.emulator_threads_isolated and index == 0 else 0


def _cell_fits(host, inst, lim, reserved=0):
    """Nova's per-cell rule on one fresh pair: the fitted cell or None."""
    try:
        return hardware._numa_fit_instance_cell(
            copy.deepcopy(host), copy.deepcopy(inst), lim, reserved)
    except exception.MemoryPageSizeNotSupported:
        return None


def pinning_valid(sc, cells, pinning):
    """Nova's pinning uses distinct free dedicated CPUs of the chosen cells."""
    by_id = {c['id']: c for c in sc['host_cells']}
    for hid, pins in zip(cells, pinning):
        c = by_id[hid]
        if pins is None:
            return False
        free = set(c.get('dedicated', [])) - set(c.get('pinned', []))
        if len(set(pins)) != len(pins) or not set(pins) <= free:
            return False
    return True


def nova_fit(sc):
    """Nova's outcome for a fit scenario (the "nova" key of FIT-FORMAT.md)."""
    _set_strategy(sc)
    host = host_topology(sc)
    inst = instance_topology(sc)
    lim = limits(sc)
    reqs, stats = _pci(sc)
    fitted = hardware.numa_fit_instance_to_host(
        host, inst, limits=lim, pci_requests=reqs or None, pci_stats=stats)
    out = {'fits': fitted is not None}
    if fitted is not None:
        out['cells'] = [c.id for c in fitted.cells]
        out['pagesize_kb'] = [c.pagesize if 'pagesize' in c and c.pagesize
                              else None for c in fitted.cells]
        if sc['guest'].get('cpu_policy') == 'dedicated':
            # None for a cell the fit cache accepted without pinning it
            out['pinning'] = [[c.cpu_pinning[v] for v in sorted(c.pcpuset)]
                              if c.cpu_pinning else None
                              for c in fitted.cells]
            out['pinning_valid'] = pinning_valid(sc, out['cells'],
                                                 out['pinning'])
            if inst.emulator_threads_isolated:
                c0 = fitted.cells[0]
                out['emulator'] = sorted(c0.cpuset_reserved) \
                    if 'cpuset_reserved' in c0 and c0.cpuset_reserved \
                    else None
        if reqs:
            out['pci_allocated'] = novarun.consume(
                dict(sc, guest_nodes=out['cells'],
                     devices=sc.get('devices', [])))
    # Nova's own rules without the permutation loop's caches.
    host = host_topology(sc)
    inst = instance_topology(sc)
    ok = [[_cell_fits(h, ic, lim, _reserved(inst, g)) is not None
           for h in host.cells]
          for g, ic in enumerate(inst.cells)]
    out['cell_fits'] = [[h.id for h, f in zip(host.cells, row) if f]
                        for row in ok]
    mappings = []
    for perm in itertools.permutations(range(len(host.cells)),
                                       len(inst.cells)):
        if not all(ok[g][h] for g, h in enumerate(perm)):
            continue
        got = [_cell_fits(host.cells[h], inst.cells[g], lim,
                          _reserved(inst, g))
               for g, h in enumerate(perm)]
        if reqs:
            _, st = _pci(sc)
            if not st.support_requests(reqs, got):
                continue
        net = network_metadata(sc)
        if net is not None and \
                not hardware._numa_cells_support_network_metadata(
                    host, [host.cells[h] for h in perm], net):
            continue
        mappings.append([host.cells[h].id for h in perm])
    out['mappings'] = mappings
    if fitted is not None:
        # The loop's fit cache can accept a pair Nova's rule refuses.
        out['valid'] = out['cells'] in mappings
    return out
