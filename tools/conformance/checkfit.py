#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Check the committed fit scenarios, and a fit runner against them.

  checkfit.py [--runner CMD] [--strict-order] FILE|DIR...

(VPA_FIT_RUNNER=CMD in the environment is --runner CMD.)

Without Nova (pure Python). For every scenario (FIT-FORMAT.md):

* the brute force, run again, gives the recorded "brute" (the files are
  not stale and nobody edited a verdict by hand);
* the per-cell rule agrees with Nova's on every pair (brute.cell_fits ==
  nova.cell_fits);
* every valid pinning Nova recorded passes the pinning rule;
* the recorded "compare" verdict follows from "nova" and "brute", and no
  scenario is "nova-only";
* where both fit and Nova's mapping has the best tiers, it is
  brute.preferred (the order of trial FIT-FORMAT.md describes is Nova's);
* with --runner CMD: CMD reads the scenario on stdin and prints its
  verdict; brutefit.check_result() must find nothing wrong with it
  (--strict-order: and the mapping must be brute.preferred).

Prints the verdict counts per file; exit 1 on any problem.
"""
import json
import os
import shlex
import subprocess
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import brutefit  # noqa: E402


def verdict(sc):
    nv, bf = sc['nova'], sc['brute']
    if nv['fits'] and (not nv.get('valid', True) or
                       not nv.get('pinning_valid', True)):
        return 'nova-invalid'
    if nv['fits'] and bf['fits'] and bf.get('nova_tier_cost') is not None:
        return 'both-fit'
    if not nv['fits'] and not bf['fits']:
        return 'both-fail'
    if not nv['fits']:
        return 'beats-nova'
    return 'nova-only'


def check_recorded(sc):
    probs = []
    bf = brutefit.brute_fit(sc)
    if bf != sc['brute']:
        probs.append('brute force now says %s, recorded %s' % (
            json.dumps(bf, sort_keys=True),
            json.dumps(sc['brute'], sort_keys=True)))
    nv = sc['nova']
    if nv['cell_fits'] != sc['brute']['cell_fits']:
        probs.append('per-cell rule %s, Nova\'s %s' % (
            sc['brute']['cell_fits'], nv['cell_fits']))
    if nv['fits'] and nv.get('valid', True) and nv.get('pinning_valid'):
        hosts = {c['id']: c for c in sc['host_cells']}
        for i, (h, pins) in enumerate(zip(nv['cells'], nv['pinning'])):
            why = brutefit.check_pinning(
                hosts[h], sc['guest']['cells'][i], pins,
                sc['guest'].get('cpu_thread_policy') or 'prefer')
            if why:
                probs.append('Nova\'s pinning of cell %d: %s' % (i, why))
    v = verdict(sc)
    bf = sc['brute']
    if v == 'both-fit' and bf['nova_tier_cost'] == bf['best_tier_cost'] and \
            nv['cells'] != bf['preferred']:
        # Nova keeps the first mapping that fits in its order; when that
        # one has the best tiers it must be the one brute.preferred names
        probs.append('Nova chose %s, the order of FIT-FORMAT.md says %s' % (
            nv['cells'], bf['preferred']))
    if v != sc['compare']['verdict']:
        probs.append('verdict %s, recorded %s' % (v, sc['compare']['verdict']))
    if v == 'nova-only':
        probs.append('Nova fits where the brute force does not')
    return probs


def run_runner(cmd, sc):
    sc = {k: v for k, v in sc.items() if k not in ('nova', 'brute', 'compare')}
    res = subprocess.run(cmd, input=json.dumps(sc), capture_output=True,
                         text=True, timeout=60)
    if res.returncode != 0:
        return None, 'runner exit %d: %s' % (res.returncode,
                                             res.stderr.strip())
    try:
        return json.loads(res.stdout), None
    except ValueError as e:
        return None, 'runner printed no JSON verdict (%s): %r' % (
            e, res.stdout[:200])


def check_runner(cmd, sc, strict_order):
    got, err = run_runner(cmd, sc)
    if err:
        return [err], None
    probs = brutefit.check_result(sc, got, sc['brute'])
    if strict_order and got.get('fits') and \
            got.get('cells') != sc['brute'].get('preferred'):
        probs.append('mapping %s, Nova\'s order prefers %s' % (
            got.get('cells'), sc['brute'].get('preferred')))
    return probs, got


def files(args):
    for a in args:
        if os.path.isdir(a):
            for f in sorted(os.listdir(a)):
                if f.endswith('.json'):
                    yield os.path.join(a, f)
        else:
            yield a


def main(argv):
    args, strict = argv[1:], False
    runner = shlex.split(os.environ['VPA_FIT_RUNNER']) \
        if os.environ.get('VPA_FIT_RUNNER') else None
    if args[:1] == ['--runner']:
        runner, args = shlex.split(args[1]), args[2:]
    if args[:1] == ['--strict-order']:
        strict, args = True, args[1:]
    if not args:
        sys.stderr.write(__doc__)
        return 2
    bad = 0
    for path in files(args):
        counts, ours = {}, {'agree': 0}
        scs = json.load(open(path))
        for sc in scs:
            probs = check_recorded(sc)
            c = sc['compare']
            key = c['verdict'] + ('(%s)' % c['category'] if 'category' in c
                                  else '')
            counts[key] = counts.get(key, 0) + 1
            if key == 'both-fit' and sc['brute']['nova_tier_cost'] > \
                    sc['brute']['best_tier_cost']:
                counts['both-fit, better tiers than Nova\'s'] = counts.get(
                    'both-fit, better tiers than Nova\'s', 0) + 1
            if runner:
                rp, _ = check_runner(runner, sc, strict)
                probs += ['runner: ' + p for p in rp]
                if not rp:
                    ours['agree'] += 1
            for p in probs:
                print('FAIL %s: %s: %s' % (os.path.basename(path), sc['name'],
                                           p))
            bad += bool(probs)
        line = '%s: %d scenarios: %s' % (
            os.path.basename(path), len(scs),
            ' '.join('%s=%d' % kv for kv in sorted(counts.items())))
        if runner:
            line += '; runner right in %d' % ours['agree']
        print(line)
    return 1 if bad else 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
