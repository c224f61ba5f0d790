#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Brute-force reference for whole-guest NUMA fits (pure Python, no Nova).

  brutefit.py [SCENARIO.json]   (default: stdin; a scenario or a list)
      prints one verdict per scenario, as FIT-FORMAT.md's "brute" key.

Tries every injective mapping of guest cells to host cells. A mapping
fits when every guest cell fits its host cell (cell_fit(): CPUs under
the CPU and thread policy, memory, pages; the rules are written out in
FIT-FORMAT.md, section "The per-cell rule") and every PCI request can
be met at once with the guest on the mapped nodes under its NUMA
policy, as docs/placement.md defines the policies (device_assignment():
every split of contested PFs into "used whole" / "used for VFs", then a
minimum-cost flow of requests onto devices, the cost being the tier).

Nothing here imports Nova: this is the independent side of the
comparison (novafit.py is Nova's).
"""
import fnmatch
import itertools
import json
import sys

TIER_AFFINE, TIER_SOCKET, TIER_UNKNOWN, TIER_REMOTE = range(4)
TRUTHY = ('true', '1', 'yes', 'on', 't', 'y')


# --------------------------------------------------------------------------
# One guest cell on one host cell
# --------------------------------------------------------------------------
def _free_dedicated(h):
    return set(h.get('dedicated', [])) - set(h.get('pinned', []))


def emulator_reserved(guest, index):
    """Dedicated CPUs more that guest cell index needs for the emulator
    threads: Nova's cpuset_reserved, 1 on the first cell with
    emulator_threads_policy isolate (numa_fit_instance_to_host)."""
    return 1 if guest.get('emulator_threads_policy') == 'isolate' and \
        guest.get('cpu_policy') == 'dedicated' and index == 0 else 0


def emulator_ok(h, vcpus, thread_policy, reserved):
    """Nova's _get_reserved after the pinning: reserved free CPUs beside
    the vCPUs' (with isolate, off the whole cores they take)."""
    if not reserved:
        return True
    free = _free_dedicated(h)
    if thread_policy != 'isolate':
        return len(free) >= vcpus + reserved
    sibs = [set(s) for s in (h['siblings'] if h.get('siblings') is not None
                             else [[x] for x in h.get('cpus', [])])]
    threads_per_core = max([len(s) for s in sibs] or [1]) or 1
    return len(free) - vcpus * threads_per_core >= reserved


def threads_ok(h, vcpus, thread_policy):
    """The thread policy over the host cell's free thread siblings."""
    free = _free_dedicated(h)
    sibs = [set(s) for s in (h['siblings'] if h.get('siblings') is not None
                             else [[x] for x in h.get('cpus', [])])]
    threads_per_core = max([len(s) for s in sibs] or [1]) or 1
    free_per_core = [len(s & free) for s in sibs]
    if thread_policy == 'isolate':
        # A whole free core per vCPU; on an SMT cell only when the shared
        # and dedicated sets coincide (Nova's legacy-configuration rule).
        if threads_per_core > 1 and \
                set(h.get('shared', [])) != set(h.get('dedicated', [])):
            return False
        whole = sum(1 for n in free_per_core if n >= threads_per_core)
        return whole >= vcpus
    if thread_policy == 'require':
        if threads_per_core <= 1:
            return False
        for t in range(2, threads_per_core + 1):
            if t * sum(1 for n in free_per_core if n >= t) >= vcpus:
                return True
        return False
    return len(free) >= vcpus          # prefer: any free dedicated CPUs


def _pages(h):
    return {p['size_kb']: p for p in h.get('mempages', [])}


def pagesize_for(h, cell):
    """Page size (KiB) the cell's memory goes to, or None if none fits."""
    pages = _pages(h)
    mem_kb = cell['memory_mb'] * 1024
    want = cell.get('pagesize')
    sizes = sorted(pages, reverse=True)
    if want == 'small':
        cand = sizes[-1:]
    elif want == 'large':
        cand = sizes[:-1]
    elif want == 'any':
        cand = sizes
    else:
        cand = [want]
    for size in cand:
        p = pages.get(size)
        if p is None:
            return None                 # the host does not offer that size
        free_kb = (p['total'] - p.get('used', 0) - p.get('reserved', 0)) * size
        if mem_kb <= free_kb and mem_kb % size == 0:
            return size
    return None


def cell_fit(h, cell, guest, limits, reserved=0):
    """Why guest cell does not fit host cell h, or None when it does;
    reserved: the emulator's dedicated CPUs it needs besides
    (emulator_reserved())."""
    vcpus = len(cell['cpus'])
    mem = cell['memory_mb']
    free_mem = h.get('memory_mb', 0) - h.get('memory_used_mb', 0)
    if cell.get('pagesize') is not None:
        if pagesize_for(h, cell) is None:
            return 'pages'
    elif h.get('mempages'):
        small = min(_pages(h))
        p = _pages(h)[small]
        if mem * 1024 > p['total'] * small or (mem * 1024) % small:
            return 'memory'
    elif mem > h.get('memory_mb', 0):
        return 'memory'
    if guest.get('cpu_policy') == 'dedicated':
        if vcpus + reserved > len(h.get('dedicated', [])):
            return 'cpus'
        if vcpus + reserved > len(_free_dedicated(h)):
            return 'cpus'
        if mem > free_mem:
            return 'memory'
        tp = guest.get('cpu_thread_policy') or 'prefer'
        if not threads_ok(h, vcpus, tp):
            return 'threads'
        if not emulator_ok(h, vcpus, tp, reserved):
            return 'emulator'
        return None
    if vcpus > len(h.get('shared', [])):
        return 'cpus'
    if limits:
        if h.get('cpu_usage', 0) + vcpus > \
                len(h.get('shared', [])) * limits['cpu_allocation_ratio']:
            return 'cpus'
        if h.get('memory_used_mb', 0) + mem > \
                h.get('memory_mb', 0) * limits['ram_allocation_ratio']:
            return 'memory'
    return None


# --------------------------------------------------------------------------
# PCI devices under the project's policies
# --------------------------------------------------------------------------
def _s(v):
    if v is None:
        return None
    if isinstance(v, bool):
        return 'true' if v else 'false'
    return str(v)


def _spec_matches_device(spec, dev):
    """A [pci] device_spec entry selects a device (and gives its tags)."""
    for k in ('vendor_id', 'product_id'):
        if k in spec and spec[k] not in ('*', dev['vendor_id' if k ==
                                                   'vendor_id' else
                                                   'product_id']):
            return False
    if 'address' in spec:
        pat = spec['address']
        if not (fnmatch.fnmatch(dev['address'], pat) or
                (dev.get('parent_addr') and
                 fnmatch.fnmatch(dev['parent_addr'], pat))):
            return False
    return True


class Inventory(object):
    """The devices the host offers: tagged by the first matching spec,
    free of other domains' claims and their relatives."""

    def __init__(self, sc):
        specs = sc.get('device_spec') or [{}]
        self.devices = []
        for d in sc.get('devices', []):
            for s in specs:
                if _spec_matches_device(s, d):
                    tags = {k: _s(v) for k, v in s.items()
                            if k not in ('vendor_id', 'product_id',
                                         'address', 'devname')}
                    self.devices.append(dict(d, tags=tags))
                    break
        held = set(sc.get('claims', []))
        blocked = set(held)
        for d in sc.get('devices', []):
            if d['address'] in held and d.get('parent_addr'):
                blocked.add(d['parent_addr'])
            if d.get('parent_addr') in held:
                blocked.add(d['address'])
        self.devices = [d for d in self.devices if d['address'] not in blocked]
        self.by_addr = {d['address']: d for d in self.devices}

    def per_node(self):
        out = {}
        for d in self.devices:
            if d.get('numa_node') is not None:
                out[d['numa_node']] = out.get(d['numa_node'], 0) + 1
        return out


def _request_matches(spec, dev):
    props = {'vendor_id': dev['vendor_id'], 'product_id': dev['product_id'],
             'dev_type': dev.get('dev_type', 'type-PCI'),
             'address': dev['address']}
    props.update(dev['tags'])
    for k, v in spec.items():
        if k == 'remote_managed':
            continue
        if props.get(k) is None or _s(v).lower() != props[k].lower():
            return False
    return True


def eligible(sc, req, dev):
    """The device may serve the request (before the NUMA policy)."""
    if not any(_request_matches(s, dev) for s in req['spec']):
        return False
    if dev.get('dev_type') == 'type-PF' and not any(
            s.get('dev_type') == 'type-PF' for s in req['spec']):
        return False
    want_rm = any(_s(s.get('remote_managed') or '').lower() in TRUTHY
                  for s in req['spec'])
    if (dev['tags'].get('remote_managed') or '').lower() in TRUTHY and \
            not want_rm:
        return False
    return True


def tier(sc, nodes, dev_node):
    if dev_node is None or dev_node < 0:
        return TIER_UNKNOWN
    if dev_node in nodes:
        return TIER_AFFINE
    sock = {c['id']: c.get('socket') for c in sc['host_cells']}
    s = sock.get(dev_node)
    if s is not None and any(sock.get(n) == s for n in nodes):
        return TIER_SOCKET
    return TIER_REMOTE


def allows(sc, policy, t):
    if policy == 'required':
        return t == TIER_AFFINE
    if policy == 'legacy':
        return t in (TIER_AFFINE, TIER_UNKNOWN)
    if policy == 'preferred':
        return True
    if policy == 'socket':
        if t == TIER_AFFINE:
            return True
        return t == TIER_SOCKET and all(c.get('socket') is not None
                                        for c in sc['host_cells'])
    raise ValueError('unknown policy %r' % policy)


def _min_cost_flow(reqs, devs, edges):
    """Requests (counts) onto devices (capacity 1), cost per edge: the
    minimum total cost of serving every request in full, or None."""
    # node ids: 0 source, 1 sink, requests, devices
    n = 2 + len(reqs) + len(devs)
    graph = [[] for _ in range(n)]

    def add(u, v, cap, cost):
        graph[u].append([v, cap, cost, len(graph[v])])
        graph[v].append([u, 0, -cost, len(graph[u]) - 1])

    for i, count in enumerate(reqs):
        add(0, 2 + i, count, 0)
    for j in range(len(devs)):
        add(2 + len(reqs) + j, 1, 1, 0)
    for i, j, cost in edges:
        add(2 + i, 2 + len(reqs) + j, 1, cost)
    need, total = sum(reqs), 0
    for _ in range(need):
        dist = [None] * n
        prev = [None] * n
        dist[0] = 0
        changed = True
        while changed:                  # Bellman-Ford: residual costs < 0
            changed = False
            for u in range(n):
                if dist[u] is None:
                    continue
                for k, (v, cap, cost, _) in enumerate(graph[u]):
                    if cap > 0 and (dist[v] is None or dist[u] + cost < dist[v]):
                        dist[v] = dist[u] + cost
                        prev[v] = (u, k)
                        changed = True
        if dist[1] is None:
            return None
        v = 1
        while v != 0:
            u, k = prev[v]
            graph[u][k][1] -= 1
            rv = graph[u][k][3]
            graph[v][rv][1] += 1
            v = u
        total += dist[1]
    return total


def device_assignment(sc, inv, nodes):
    """Minimum tier total of serving every request with the guest on
    nodes (a set of host cell ids), or None when no assignment exists."""
    reqs = sc.get('requests') or []
    if not reqs:
        return 0
    cand = []                            # per request: {address: tier}
    for r in reqs:
        c = {}
        for d in inv.devices:
            if not eligible(sc, r, d):
                continue
            t = tier(sc, nodes, d.get('numa_node'))
            if allows(sc, r['policy'], t):
                c[d['address']] = t
        cand.append(c)
    wanted = set(a for c in cand for a in c)
    pfs = sorted(a for a in wanted
                 if inv.by_addr[a].get('dev_type') == 'type-PF')
    contested = [p for p in pfs if any(inv.by_addr[a].get('parent_addr') == p
                                       for a in wanted)]
    best = None
    for mode in itertools.product((True, False), repeat=len(contested)):
        whole = {p for p, m in zip(contested, mode) if m}
        gone = {p for p, m in zip(contested, mode) if not m}
        usable = [a for a in sorted(wanted) if a not in gone and
                  inv.by_addr[a].get('parent_addr') not in whole]
        index = {a: j for j, a in enumerate(usable)}
        edges = [(i, index[a], t) for i, c in enumerate(cand)
                 for a, t in c.items() if a in index]
        cost = _min_cost_flow([r['count'] for r in reqs], usable, edges)
        if cost is not None and (best is None or cost < best):
            best = cost
    return best


# --------------------------------------------------------------------------
# NUMA-aware vSwitch ports (docs/vswitch.md)
# --------------------------------------------------------------------------
def net_rules(sc):
    """The guest's network rules: (physnet or None for the tunnel, policy,
    host nodes with affinity) for every vSwitch port (vswitch_ports) and
    every SR-IOV port with a physnet, as in Nova; a network no node has
    affinity to constrains nothing. Only scenarios with vswitch_ports."""
    if 'vswitch_ports' not in sc:
        return []
    fl = sc.get('flavor_policy') or sc.get('image_policy') or 'legacy'
    out = []
    for p in sc['vswitch_ports']:
        if p.get('tunneled'):
            nodes = [c['id'] for c in sc['host_cells'] if c.get('tunneled')]
            out.append((None, p.get('policy') or fl, nodes))
        else:
            nodes = [c['id'] for c in sc['host_cells']
                     if p['physnet'] in c.get('physnets', [])]
            out.append((p['physnet'], p.get('policy') or fl, nodes))
    for r in sc.get('requests') or []:
        pn = (r.get('spec') or [{}])[0].get('physical_network')
        if r.get('kind') == 'port' and pn:
            nodes = [c['id'] for c in sc['host_cells']
                     if pn in c.get('physnets', [])]
            out.append((pn, r['policy'], nodes))
    return [x for x in out if x[2]]


def nova_net_ok(sc, cells):
    """Nova's reading of the rules: every network hard, whatever the
    port's policy (_numa_cells_support_network_metadata)."""
    return all(any(h in nodes for h in cells) for _, _, nodes in net_rules(sc))


def net_misses(sc, cells):
    """Preferred rules no node of cells meets, or None when a hard one
    (unset, required, legacy; socket at the socket's level) is unmet."""
    sockets = {c['id']: c.get('socket') for c in sc['host_cells']}
    misses = 0
    for _, policy, nodes in net_rules(sc):
        ok = any(h in nodes for h in cells)
        if not ok and policy == 'socket':
            ok = any(sockets[n] is not None and sockets[n] == sockets[h]
                     for n in nodes for h in cells)
        if ok:
            continue
        if policy != 'preferred':
            return None
        misses += 1
    return misses


# --------------------------------------------------------------------------
# The whole guest
# --------------------------------------------------------------------------
def nova_order(sc, inv):
    """Host cells in the order Nova tries them (FIT-FORMAT.md)."""
    cells = list(sc['host_cells'])
    if len(cells) <= len(sc['guest']['cells']):
        return [c['id'] for c in cells]
    pack = sc.get('cell_allocation', 'spread') == 'pack'
    cells.sort(key=lambda c: c.get('memory_mb', 0) - c.get('memory_used_mb', 0),
               reverse=not pack)
    if sc['guest'].get('cpu_policy') == 'dedicated':
        cells.sort(key=lambda c: len(_free_dedicated(c)), reverse=not pack)
    else:
        cells.sort(key=lambda c: c.get('cpu_usage', 0), reverse=pack)
    per_node = inv.per_node()
    cells.sort(key=lambda c: per_node.get(c['id'], 0),
               reverse=bool(sc.get('requests')))
    return [c['id'] for c in cells]


def brute_fit(sc):
    """The "brute" verdict of FIT-FORMAT.md."""
    guest, limits = sc['guest'], sc.get('limits')
    hosts = {c['id']: c for c in sc['host_cells']}
    ids = [c['id'] for c in sc['host_cells']]
    inv = Inventory(sc)
    rules = net_rules(sc)
    ok = [[cell_fit(hosts[h], gc, guest, limits,
                    emulator_reserved(guest, g)) is None for h in ids]
          for g, gc in enumerate(guest['cells'])]
    mappings = []
    for perm in itertools.permutations(range(len(ids)), len(guest['cells'])):
        if not all(ok[g][h] for g, h in enumerate(perm)):
            continue
        cells = [ids[h] for h in perm]
        net = net_misses(sc, cells) if rules else 0
        if net is None:
            continue
        cost = device_assignment(sc, inv, set(cells))
        if cost is not None:
            m = {'cells': cells, 'tier_cost': cost}
            if rules:
                m['net_misses'] = net
            mappings.append(m)
    out = {'fits': bool(mappings),
           'cell_fits': [[h for h, f in zip(ids, row) if f] for row in ok],
           'mappings': mappings}
    if mappings:
        best = min(m['tier_cost'] for m in mappings)
        out['best_tier_cost'] = best
        least = min(m.get('net_misses', 0) for m in mappings
                    if m['tier_cost'] == best)
        if rules:
            out['best_net_misses'] = least
        rank = {h: i for i, h in enumerate(nova_order(sc, inv))}
        out['preferred'] = min(
            (m['cells'] for m in mappings if m['tier_cost'] == best and
             m.get('net_misses', 0) == least),
            key=lambda cells: [rank[h] for h in cells])
    nv = sc.get('nova')
    if nv and nv.get('fits'):
        out['nova_tier_cost'] = device_assignment(sc, inv, set(nv['cells']))
    return out


def _core_of(h):
    sibs = h['siblings'] if h.get('siblings') is not None else \
        [[x] for x in h.get('cpus', [])]
    return {x: i for i, s in enumerate(sibs) for x in s}, sibs


def check_pinning(h, cell, pins, thread_policy):
    """Why a dedicated cell's pinning breaks the rules, or None."""
    vcpus = len(cell['cpus'])
    if pins is None or len(pins) != vcpus:
        return 'pins %s for %d vCPUs' % (pins, vcpus)
    free = _free_dedicated(h)
    if len(set(pins)) != len(pins):
        return 'a host CPU pinned twice: %s' % pins
    if not set(pins) <= free:
        return 'CPUs %s are not free dedicated CPUs of node %d' % (
            sorted(set(pins) - free), h['id'])
    core, sibs = _core_of(h)
    threads_per_core = max([len(s) for s in sibs] or [1]) or 1
    used = {}
    for p in pins:
        used.setdefault(core.get(p), []).append(p)
    if thread_policy == 'isolate':
        for c, ps in used.items():
            if len(ps) > 1 or c is None or \
                    len(set(sibs[c]) & free) < threads_per_core:
                return 'isolate: core %s is not a whole free core for one ' \
                       'vCPU (%s)' % (sibs[c] if c is not None else '?', ps)
    elif thread_policy == 'require':
        singles = 0
        for c, ps in used.items():
            if c is None or len(set(sibs[c]) & free) < 2:
                return 'require: CPU %s has no free sibling' % ps
            singles += len(ps) == 1
        if singles > 1:
            return 'require: %d cores hold a single vCPU of the cell' % singles
    return None


def check_emulator(h, pins, thread_policy, reserved, emulator):
    """Why a runner's emulator CPUs (emulator_threads_policy isolate) on
    node h beside the vCPUs' pins break Nova's cpuset_reserved, or None:
    reserved free dedicated CPUs no vCPU takes, with isolate off the
    vCPUs' cores."""
    if not reserved:
        return None if not emulator else 'emulator CPUs %s without ' \
            'isolate' % emulator
    if emulator is None or len(set(emulator)) != reserved:
        return 'emulator CPUs %s, isolate needs %d' % (emulator, reserved)
    free = _free_dedicated(h)
    if not set(emulator) <= free or set(emulator) & set(pins or []):
        return 'emulator CPUs %s are not free dedicated CPUs of node %d ' \
               'beside the vCPUs\' %s' % (emulator, h['id'], pins)
    if thread_policy == 'isolate':
        core, _ = _core_of(h)
        taken = {core.get(p) for p in pins or []}
        if any(core.get(e) in taken for e in emulator):
            return 'emulator CPUs %s on a core the vCPUs take (isolate)' % (
                emulator)
    return None


def isolate_whole_cores(h, vcpus):
    """isolate as the project gives it on any node: a whole free core per
    vCPU, its other threads kept (docs/placement.md), also on an SMT node
    whose shared and dedicated sets differ, where Nova refuses."""
    free = _free_dedicated(h)
    sibs = [set(s) for s in (h['siblings'] if h.get('siblings') is not None
                             else [[x] for x in h.get('cpus', [])])]
    threads_per_core = max([len(x) for x in sibs] or [1]) or 1
    return sum(1 for x in sibs if len(x & free) >= threads_per_core) >= vcpus


def isolate_smt_node(h):
    """A node where Nova's isolate rule and the project's differ."""
    sibs = h.get('siblings') or []
    return max([len(x) for x in sibs] or [1]) > 1 and \
        set(h.get('shared', [])) != set(h.get('dedicated', []))


def check_devices(sc, nodes, devices, tier_cost):
    """Problems with a runner's devices (per request, its addresses) for
    the guest on nodes: each a free device of the inventory that the
    request may take under its policy there, none twice, no PF with one
    of its VFs, every count met, and their tiers summing to tier_cost."""
    reqs = sc.get('requests') or []
    devices = devices if devices is not None else []
    if len(devices) != len(reqs):
        return ['devices for %d requests, the guest has %d' % (
            len(devices), len(reqs))]
    inv, probs, seen, total = Inventory(sc), [], set(), 0
    for i, (r, addrs) in enumerate(zip(reqs, devices)):
        if len(addrs) != r['count']:
            probs.append('request %d: %d devices for a count of %d' % (
                i, len(addrs), r['count']))
        for a in addrs:
            d = inv.by_addr.get(a)
            if d is None:
                probs.append('request %d: %s is not a free device of the '
                             'inventory' % (i, a))
                continue
            if a in seen:
                probs.append('request %d: %s given twice' % (i, a))
            seen.add(a)
            if not eligible(sc, r, d):
                probs.append('request %d: %s does not match it' % (i, a))
            t = tier(sc, nodes, d.get('numa_node'))
            if not allows(sc, r['policy'], t):
                probs.append('request %d: %s (tier %d) is outside policy %s '
                             'with the guest on %s' % (i, a, t, r['policy'],
                                                       sorted(nodes)))
            total += t
    for a in seen:
        if inv.by_addr[a].get('parent_addr') in seen:
            probs.append('%s and its PF %s both given' % (
                a, inv.by_addr[a]['parent_addr']))
    if tier_cost != total:
        probs.append('tier total %s, its devices\' tiers sum to %d' % (
            tier_cost, total))
    return probs


def check_valid(sc, res):
    """Problems with a fit a runner returned, judged on the scenario
    alone (no brute force): every cell on a node of its own whose CPUs,
    memory and pages hold it (the per-cell rule, isolate taking whole
    cores on any node), pinnings and shared CPUs on that node, the page
    size the cell asks for, and the devices (check_devices)."""
    g = sc['guest']
    hosts = {c['id']: c for c in sc['host_cells']}
    cells = res.get('cells')
    if not isinstance(cells, list) or len(cells) != len(g['cells']) or \
            any(h not in hosts for h in cells):
        return ['cells %r for %d guest cells on nodes %s' % (
            cells, len(g['cells']), sorted(hosts))]
    probs = []
    if len(set(cells)) != len(cells):
        probs.append('two guest cells on one node: %s' % cells)
    tp = g.get('cpu_thread_policy') or 'prefer'
    pages = res.get('pagesize_kb') or [None] * len(cells)
    cpus = res.get('pinning' if g.get('cpu_policy') == 'dedicated'
                   else 'cpus') or [None] * len(cells)
    for i, (hid, gc) in enumerate(zip(cells, g['cells'])):
        h = hosts[hid]
        why = cell_fit(h, gc, g, sc.get('limits'), emulator_reserved(g, i))
        if why == 'threads' and g.get('cpu_policy') == 'dedicated' and \
                tp == 'isolate' and isolate_whole_cores(h, len(gc['cpus'])):
            why = None
        if why:
            probs.append('cell %d does not fit node %d: %s' % (i, hid, why))
        want = None if gc.get('pagesize') is None else pagesize_for(h, gc)
        if (pages[i] if i < len(pages) else None) != want:
            probs.append('cell %d: page size %s, it asks for %s (%s)' % (
                i, pages[i] if i < len(pages) else None, gc.get('pagesize'),
                want))
        mine = cpus[i] if i < len(cpus) else None
        if g.get('cpu_policy') == 'dedicated':
            why = check_pinning(h, gc, mine, tp)
            if why:
                probs.append('cell %d: %s' % (i, why))
            why = check_emulator(h, mine, tp, emulator_reserved(g, i),
                                 res.get('emulator') if i == 0 else None)
            if why:
                probs.append('cell %d: %s' % (i, why))
        elif not mine or not set(mine) <= set(h.get('shared', [])) or \
                len(mine) < len(gc['cpus']):
            probs.append('cell %d: CPUs %s are not enough of node %d\'s '
                         'shared CPUs %s' % (i, mine, hid, h.get('shared')))
    if net_rules(sc):
        net = net_misses(sc, cells)
        if net is None:
            probs.append('a hard vSwitch rule is unmet on nodes %s' % cells)
        elif res.get('net_misses') != net:
            probs.append('%s preferred networks missed, its nodes miss %d' % (
                res.get('net_misses'), net))
    return probs + check_devices(sc, set(cells), res.get('devices'),
                                 res.get('tier_cost'))


def main(argv):
    f = open(argv[1]) if len(argv) > 1 and argv[1] != '-' else sys.stdin
    doc = json.load(f)
    scs = doc if isinstance(doc, list) else [doc]
    out = [dict(name=sc.get('name'), **brute_fit(sc)) for sc in scs]
    json.dump(out if isinstance(doc, list) else out[0], sys.stdout,
              sort_keys=True)
    sys.stdout.write('\n')
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
