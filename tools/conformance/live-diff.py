#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Live differential test: fresh random scenarios through Nova and us.

  live-diff.py PLACE-DRIVER [COUNT [SEED]]

Generates COUNT random and targeted scenarios (seed printed, so a failure
can be replayed), records Nova's outcome with its own code, runs
tests/place-driver over them and compares as tests/test-conformance.c
does: where Nova places, we place validly with a tier total no worse;
where Nova fails and we place, our placement must pass the independent
check (an improvement); on small scenarios an exhaustive search proves
we fail only when nothing is valid and reach the best tier total. Exit 77 (skipped) without python3-nova.
"""
import json
import os
import subprocess
import sys
import tempfile
import time

try:
    import nova  # noqa: F401
except ImportError:
    print('SKIP: python3-nova is not importable by %s; install python3-nova '
          'and run this under /usr/bin/python3' % sys.executable)
    sys.exit(77)

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import generate  # noqa: E402


def main(argv):
    driver = argv[1]
    count = int(argv[2]) if len(argv) > 2 else 150
    seed = int(argv[3]) if len(argv) > 3 else int(time.time())
    print('seed %d, %d scenarios' % (seed, count))
    scs = (generate.random_set(count, seed) +
           generate.targeted_set(count // 3, seed))
    with tempfile.NamedTemporaryFile('w', suffix='.json', delete=False) as f:
        json.dump(scs, f)
        path = f.name
    try:
        out = subprocess.run([driver, path], check=True, capture_output=True,
                             text=True).stdout
    finally:
        os.unlink(path)
    ours = {o['name']: o for o in json.loads(out)}
    bad, stats = [], {'matched': 0, 'improved': 0, 'group': 0}
    for sc in scs:
        o, nv = ours[sc['name']], sc['nova']
        if 'skip' in o or 'policy_error' in o:
            continue
        if not o['ok'] and o.get('brute_valid', 0) > 0:
            bad.append('%s: a valid assignment exists, we fail: %s' % (
                sc['name'], o['error']))
            continue
        if o['ok'] and 'brute_best' in o and o['tier_cost'] != o['brute_best']:
            bad.append('%s: tier total %d, the best is %d' % (
                sc['name'], o['tier_cost'], o['brute_best']))
            continue
        if nv['ok'] and o.get('nova_splits_group'):
            stats['group'] += 1      # Nova has no pf-group
            continue
        if nv['ok'] and not o.get('nova_valid'):
            bad.append('%s: Nova\'s placement is invalid in our model' % sc['name'])
        elif o.get('ok') and not o.get('valid'):
            bad.append('%s: invalid placement: %s' % (sc['name'], o.get('invalid')))
        elif nv['ok'] and not o['ok']:
            bad.append('%s: Nova places, we fail: %s' % (sc['name'], o['error']))
        elif nv['ok'] and o['tier_cost'] > o['nova_tier_cost']:
            bad.append('%s: tiers %d worse than Nova\'s %d' % (
                sc['name'], o['tier_cost'], o['nova_tier_cost']))
        elif not nv['ok'] and o['ok']:
            stats['improved'] += 1
        else:
            stats['matched'] += 1
    print('matched %(matched)d, improved %(improved)d, '
          'Nova putting a pf-group on one PF %(group)d' % stats)
    for b in bad:
        print('FAIL ' + b)
    return 1 if bad else 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
