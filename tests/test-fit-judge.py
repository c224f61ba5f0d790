#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""The fit judge can fail: checkfit.judge() on broken verdicts.

  test-fit-judge.py FIT-RUNNER DIR

Runs the library's fit (FIT-RUNNER) on the committed scenarios of DIR,
then breaks each verdict in every way below that applies to it and
expects judge() to report a problem for every broken copy: a judge
that passes any of them would pass a wrong fit in test-fit-conformance
and conformance-fit-live. Prints how many broken verdicts of each kind
were caught; exit 1 if one passed, or if a kind never applied.
"""
import copy
import json
import os
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                '..', 'tools', 'conformance'))
import brutefit  # noqa: E402
import checkfit  # noqa: E402


def _not_free(sc, node):
    """A CPU of node that a dedicated guest may not take, or None."""
    h = next(c for c in sc['host_cells'] if c['id'] == node)
    free = brutefit._free_dedicated(h)
    taken = [x for x in h.get('cpus', []) if x not in free]
    return taken[0] if taken else None


def no_fit(sc, got):
    if sc['brute']['fits']:
        return dict(got, fits=False, error='broken'), True
    return None, False


def other_node(sc, got):
    """Cell 0 moved to a node no cell of the mapping uses."""
    used = set(got['cells'])
    free = [c['id'] for c in sc['host_cells'] if c['id'] not in used]
    for n in free:
        cells = [n] + got['cells'][1:]
        tiers = {tuple(m['cells']): m['tier_cost']
                 for m in sc['brute']['mappings']}
        # still right when that mapping fits as well with the best tiers
        # and the same CPUs would do: only mappings the brute force
        # refuses are wrong for sure
        if tuple(cells) not in tiers:
            return dict(got, cells=cells), True
    return None, False


def same_node(sc, got):
    if len(got['cells']) < 2:
        return None, False
    return dict(got, cells=[got['cells'][0]] * len(got['cells'])), True


def pin_taken(sc, got):
    if sc['guest'].get('cpu_policy') != 'dedicated':
        return None, False
    cpu = _not_free(sc, got['cells'][0])
    if cpu is None:
        return None, False
    bad = copy.deepcopy(got)
    bad['pinning'][0][0] = cpu
    return bad, True


def pin_twice(sc, got):
    if sc['guest'].get('cpu_policy') != 'dedicated' or \
            len(got['pinning'][0]) < 2:
        return None, False
    bad = copy.deepcopy(got)
    bad['pinning'][0][1] = bad['pinning'][0][0]
    return bad, True


def shared_foreign(sc, got):
    """A shared cell floating on a CPU of another node."""
    if sc['guest'].get('cpu_policy') == 'dedicated':
        return None, False
    for c in sc['host_cells']:
        if c['id'] != got['cells'][0] and c.get('cpus'):
            bad = copy.deepcopy(got)
            bad['cpus'][0] = bad['cpus'][0] + [c['cpus'][0]]
            return bad, True
    return None, False


def page_size(sc, got):
    bad = copy.deepcopy(got)
    bad['pagesize_kb'][0] = 2048 if got['pagesize_kb'][0] != 2048 else 1048576
    return bad, True


def tier_off(sc, got):
    return dict(got, tier_cost=got['tier_cost'] + 1), True


def device_dropped(sc, got):
    if not got['devices'] or not got['devices'][0]:
        return None, False
    bad = copy.deepcopy(got)
    bad['devices'][0] = bad['devices'][0][1:]
    return bad, True


def device_held(sc, got):
    """A device another domain holds, in place of one chosen."""
    if not got['devices'] or not got['devices'][0] or not sc.get('claims'):
        return None, False
    bad = copy.deepcopy(got)
    bad['devices'][0][0] = sc['claims'][0]
    return bad, True


def device_twice(sc, got):
    flat = [a for d in got['devices'] for a in d]
    if len(flat) < 2:
        return None, False
    bad = copy.deepcopy(got)
    for d in bad['devices']:
        for k in range(len(d)):
            d[k] = flat[0]
    return bad, True


def device_off_policy(sc, got):
    """A device the request matches but its policy refuses there."""
    inv = brutefit.Inventory(sc)
    nodes = set(got['cells'])
    chosen = {a for d in got['devices'] for a in d}
    for i, r in enumerate(sc.get('requests') or []):
        if not got['devices'][i]:
            continue
        for d in inv.devices:
            t = brutefit.tier(sc, nodes, d.get('numa_node'))
            if d['address'] not in chosen and brutefit.eligible(sc, r, d) \
                    and not brutefit.allows(sc, r['policy'], t):
                bad = copy.deepcopy(got)
                bad['devices'][i][0] = d['address']
                return bad, True
    return None, False


def fit_where_none(sc, got):
    """A fit claimed where the brute force finds none (Nova's mapping
    when it has one, else the first nodes)."""
    if sc['brute']['fits'] or got.get('fits'):
        return None, False
    cells = sc['nova'].get('cells') or \
        [c['id'] for c in sc['host_cells']][:len(sc['guest']['cells'])]
    if len(cells) < len(sc['guest']['cells']):
        return None, False
    key = 'pinning' if sc['guest'].get('cpu_policy') == 'dedicated' \
        else 'cpus'
    hosts = {c['id']: c for c in sc['host_cells']}
    cpus = [sorted(brutefit._free_dedicated(hosts[h]))[:len(gc['cpus'])]
            if key == 'pinning' else hosts[h].get('shared', [])
            for h, gc in zip(cells, sc['guest']['cells'])]
    pages = [None if gc.get('pagesize') is None
             else brutefit.pagesize_for(hosts[h], gc)
             for h, gc in zip(cells, sc['guest']['cells'])]
    return {'name': sc['name'], 'fits': True, 'cells': cells, key: cpus,
            'pagesize_kb': pages, 'tier_cost': 0,
            'devices': [[] for _ in sc.get('requests') or []]}, True


BREAKS = [no_fit, other_node, same_node, pin_taken, pin_twice,
          shared_foreign, page_size, tier_off, device_dropped, device_held,
          device_twice, device_off_policy]


def main(argv):
    runner, path = argv[1], argv[2]
    caught = {b.__name__: 0 for b in BREAKS + [fit_where_none]}
    missed = []
    for f in checkfit.files([path]):
        scs = json.load(open(f))
        got, err = checkfit.run_runner([runner], scs)
        if err:
            print('FAIL %s: %s' % (f, err))
            return 1
        for sc, res in zip(scs, got):
            outcome, probs = checkfit.judge(sc, res)
            if probs:
                print('FAIL %s: the unbroken verdict is judged wrong: %s' % (
                    sc['name'], probs))
                return 1
            for b in (BREAKS if res.get('fits') else [fit_where_none]):
                bad, applies = b(sc, res)
                if not applies:
                    continue
                outcome, probs = checkfit.judge(sc, bad)
                if probs:
                    caught[b.__name__] += 1
                else:
                    missed.append('%s: %s passed as %s' % (
                        sc['name'], b.__name__, outcome))
    print(' '.join('%s=%d' % kv for kv in caught.items()))
    for m in missed:
        print('FAIL ' + m)
    never = [k for k, v in caught.items() if v == 0]
    for k in never:
        print('FAIL no scenario to break with %s' % k)
    return 1 if missed or never else 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
