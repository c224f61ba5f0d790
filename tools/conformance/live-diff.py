#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Live differential test: fresh random scenarios through Nova and us.

  live-diff.py PLACE-DRIVER [COUNT [SEED]]
  live-diff.py --fit [--runner CMD] [COUNT [SEED]]

Generates COUNT random and targeted scenarios (seed printed, so a failure
can be replayed; VPA_LIVE_SEED=random draws a fresh one), records Nova's outcome with its own code, runs
tests/place-driver over them and compares as tests/test-conformance.c
does: where Nova places, we place validly with a tier total no worse;
where Nova fails and we place, our placement must pass the independent
check (an improvement); on small scenarios an exhaustive search proves
we fail only when nothing is valid and reach the best tier total. Exit 77 (skipped) without python3-nova.

--fit: fresh whole-guest fit scenarios (every family of genfit.py but the
exhaustive one, COUNT in all, default 120) through Nova's
numa_fit_instance_to_host and the brute force (tools/conformance/
FIT-FORMAT.md): the per-cell rules must agree on every pair, Nova's
valid pinnings must pass the pinning rule, and Nova must never fit where
the brute force does not; the cases where the brute force fits and Nova
does not are counted by category. With --runner CMD (or VPA_FIT_RUNNER
in the environment; the conformance-fit-live test sets it to
tests/fit-runner, the library's fit), CMD gets the scenarios on stdin
and every verdict must pass checkfit.judge(), the judge
test-fit-conformance applies to the committed scenarios.
"""
import json
import os
import shlex
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


def seed_of(argv, i):
    # A fixed seed keeps CI reproducible; VPA_LIVE_SEED=random (or a
    # number) explores fresh scenarios, and the seed is printed either way.
    env_seed = os.environ.get('VPA_LIVE_SEED', '20261129')
    if len(argv) > i:
        return int(argv[i])
    if env_seed == 'random':
        return int(time.time())
    return int(env_seed)


def fit_main(argv):
    import checkfit
    import genfit
    runner = os.environ.get('VPA_FIT_RUNNER') or None
    if argv[:1] == ['--runner']:
        runner, argv = argv[1], argv[2:]
    argv = ['--fit'] + argv
    count = int(argv[1]) if len(argv) > 1 else 120
    seed = seed_of(argv, 2)
    names = [f for f in genfit.FAMILIES if f != 'exhaustive']
    print('fit: seed %d, %d scenarios%s' % (
        seed, count, ', runner %s' % runner if runner else ''))
    start = time.monotonic()
    bad, counts, scs = [], {}, []
    for k, name in enumerate(names):
        n = count // len(names) + (k < count % len(names))
        for sc in genfit.family(name, n, seed + k):
            sc['name'] = 'live-' + sc['name']
            key = sc['compare']['verdict'] + (
                '(%s)' % sc['compare']['category']
                if 'category' in sc['compare'] else '')
            counts[key] = counts.get(key, 0) + 1
            bad += ['%s (family %s, seed %d): %s' % (sc['name'], name,
                                                      seed + k, p)
                    for p in checkfit.check_recorded(sc)]
            scs.append(sc)
    recorded = time.monotonic()
    print('Nova against the brute force: %s (%.1f s)' % (
        checkfit.fmt_counts(counts), recorded - start))
    if runner:
        ours, probs, pref = checkfit.judge_all(shlex.split(runner), scs)
        bad += ['runner: ' + p for p in probs]
        print('the runner judged: %s; Nova\'s order\'s first of least tiers '
              'in %d (%.1f s)' % (checkfit.fmt_counts(ours), pref,
                                  time.monotonic() - recorded))
    for b in bad:
        print('FAIL ' + b)
    return 1 if bad else 0


def main(argv):
    if argv[1:2] == ['--fit']:
        return fit_main(argv[2:])
    driver = argv[1]
    count = int(argv[2]) if len(argv) > 2 else 150
    seed = seed_of(argv, 3)
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
