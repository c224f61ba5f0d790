#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Check the committed fit scenarios, and a fit runner against them.

  checkfit.py [--runner CMD] [--strict-order] [--no-recheck] FILE|DIR...

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
* with --runner CMD: CMD reads the file's scenarios (a list) on stdin
  and prints its verdicts (FIT-FORMAT.md, "A runner's verdict"); judge()
  must find nothing wrong with any of them (--strict-order: and the
  mapping must be brute.preferred). judge() is the one comparison of a
  fit with Nova's and the brute force's: live-diff.py --fit uses it too.

--no-recheck: only the runner's verdicts are judged (test-fit-conformance;
conformance-fit re-checks the recorded files).

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


def order_lost(sc, chosen, preferred):
    """Nova's loop passed preferred, earlier in its order than chosen,
    although its own rules accept it (nova.mappings): its fit caches lost
    it (FIT-FORMAT.md, "The fit caches"), not a different order."""
    mappings = [m if isinstance(m, list) else m.get('cells')
                for m in sc['nova'].get('mappings') or []]
    rank = {h: i for i, h in enumerate(
        brutefit.nova_order(sc, brutefit.Inventory(sc)))}
    return preferred in mappings and \
        [rank[h] for h in preferred] < [rank[h] for h in chosen]


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
            nv['cells'] != bf['preferred'] and \
            brutefit.nova_net_ok(sc, bf['preferred']) and \
            not order_lost(sc, nv['cells'], bf['preferred']):
        # Nova keeps the first mapping that fits in its order; when that
        # one has the best tiers it must be the one brute.preferred names
        probs.append('Nova chose %s, the order of FIT-FORMAT.md says %s' % (
            nv['cells'], bf['preferred']))
    if v != sc['compare']['verdict']:
        probs.append('verdict %s, recorded %s' % (v, sc['compare']['verdict']))
    if v == 'nova-only':
        probs.append('Nova fits where the brute force does not')
    return probs


def runner_command(cmd):
    """cmd, behind the suite's wrapper (valgrind) when one is set."""
    wrap = os.environ.get('VPA_TEST_WRAPPER')
    return (shlex.split(wrap) if wrap else []) + list(cmd)


def run_runner(cmd, scs):
    """The runner's verdicts on scs (one run, the list on stdin), or
    (None, why)."""
    scs = [{k: v for k, v in sc.items() if k not in ('nova', 'brute',
                                                      'compare')}
           for sc in scs]
    res = subprocess.run(runner_command(cmd), input=json.dumps(scs),
                         capture_output=True, text=True, timeout=600)
    if res.returncode != 0:
        return None, 'runner exit %d: %s' % (res.returncode,
                                             res.stderr.strip())
    try:
        got = json.loads(res.stdout)
    except ValueError as e:
        return None, 'runner printed no JSON verdicts (%s): %r' % (
            e, res.stdout[:200])
    if not isinstance(got, list) or len(got) != len(scs) or \
            [g.get('name') for g in got] != [sc.get('name') for sc in scs]:
        return None, 'runner gave %s verdicts for %d scenarios' % (
            len(got) if isinstance(got, list) else 'no list of', len(scs))
    return got, None


def _nova_valid(nv):
    return nv['fits'] and nv.get('valid', True) and \
        nv.get('pinning_valid', True)


def judge(sc, got):
    """The one judge of a fit runner's verdict got on scenario sc (its
    "nova" and "brute" recorded): (outcome, problems). Problems is empty
    exactly when the verdict is one of these outcomes:

    both-fit / both-fit(better tiers)  Nova fits validly; we fit, tier total
        no worse than on Nova's mapping (and the brute force's least);
    beats-nova(CATEGORY)  Nova fails, the brute force proves a fit, we fit;
    nova-invalid(we fit) / nova-invalid(both fail)  Nova's fit is wrong
        (FIT-FORMAT.md, "fit-cache"); we fit iff a valid one exists;
    both-fail  Nova, the brute force and we fail;
    isolate-smt  isolate on an SMT node whose shared and dedicated sets
        differ: Nova refuses, we give whole cores (docs/placement.md);
    skipped(page size large/any)  a page size a domain cannot ask for.

    Whenever we fit, the fit must pass brutefit.check_valid() (CPUs,
    memory, pages, devices within the scenario's capacity). Where the
    brute force fits we fit too, with a mapping it lists and its least
    tier total. No other difference passes."""
    nv, bf, g = sc['nova'], sc['brute'], sc['guest']
    if 'unsupported' in got:
        if any(c.get('pagesize') in ('large', 'any') for c in g['cells']):
            return 'skipped(page size large/any)', []
        return 'unsupported', ['the runner does not take it: %s' %
                               got['unsupported']]
    ours = bool(got.get('fits'))
    if ours:
        probs = brutefit.check_valid(sc, got)
        if probs:
            return 'invalid', probs
    hosts = {c['id']: c for c in sc['host_cells']}
    isolate_smt = ours and g.get('cpu_thread_policy') == 'isolate' and any(
        brutefit.isolate_smt_node(hosts[h]) for h in got['cells'])
    if ours and not bf['fits']:
        if isolate_smt:
            return 'isolate-smt', []
        return 'we-only', ['we fit on %s where the brute force proves no '
                           'mapping fits' % got['cells']]
    if bf['fits'] and not ours:
        return 'we-miss', ['the brute force fits (%s), we do not: %s' % (
            bf['preferred'], got.get('error'))]
    if not ours:
        if _nova_valid(nv):
            return 'nova-only', ['Nova fits validly, we and the brute force '
                                 'do not']
        return 'nova-invalid(both fail)' if nv['fits'] else 'both-fail', []
    tiers = {tuple(m['cells']): m['tier_cost'] for m in bf['mappings']}
    mine = tuple(got['cells'])
    if mine not in tiers:
        if isolate_smt and got['tier_cost'] <= bf['best_tier_cost']:
            return 'isolate-smt', []
        return 'wrong', ['mapping %s is not one the brute force fits' %
                         list(mine)]
    if got['tier_cost'] != bf['best_tier_cost'] or \
            tiers[mine] != bf['best_tier_cost']:
        return 'wrong', ['tier total %d on %s, the best is %d' % (
            got['tier_cost'], list(mine), bf['best_tier_cost'])]
    if 'best_net_misses' in bf:
        misses = {tuple(m['cells']): m['net_misses'] for m in bf['mappings']}
        if misses[mine] != bf['best_net_misses']:
            return 'wrong', ['%d preferred networks missed on %s, the least '
                             'is %d' % (misses[mine], list(mine),
                                        bf['best_net_misses'])]
    if _nova_valid(nv):
        nt = bf.get('nova_tier_cost')
        if nt is None:
            return 'nova-only', ['Nova\'s mapping %s has no device assignment '
                                 'under the project\'s policies' % nv['cells']]
        if got['tier_cost'] > nt:
            return 'wrong', ['tier total %d, Nova\'s is %d' % (
                got['tier_cost'], nt)]
        return 'both-fit' + ('(better tiers)' if got['tier_cost'] < nt
                             else ''), []
    if nv['fits']:
        return 'nova-invalid(we fit)', []
    return 'beats-nova(%s)' % sc['compare'].get('category', '?'), []


def judge_all(cmd, scs, strict_order=False):
    """Runs the runner on scs and judges every verdict: (counts of the
    outcomes, problems as 'NAME: PROBLEM', how many mappings were
    brute.preferred)."""
    got, err = run_runner(cmd, scs)
    if err:
        return {}, ['runner: ' + err], 0
    counts, probs, preferred = {}, [], 0
    for sc, res in zip(scs, got):
        outcome, why = judge(sc, res)
        counts[outcome] = counts.get(outcome, 0) + 1
        if res.get('fits') and sc['brute'].get('fits'):
            if res.get('cells') == sc['brute'].get('preferred'):
                preferred += 1
            elif strict_order:
                why = why + ['mapping %s, Nova\'s order prefers %s' % (
                    res.get('cells'), sc['brute'].get('preferred'))]
        probs += ['%s: %s' % (sc['name'], p) for p in why]
    return counts, probs, preferred


def fmt_counts(counts):
    return ' '.join('%s=%d' % kv for kv in sorted(counts.items()))


def files(args):
    for a in args:
        if os.path.isdir(a):
            for f in sorted(os.listdir(a)):
                if f.endswith('.json'):
                    yield os.path.join(a, f)
        else:
            yield a


def main(argv):
    args, strict, recheck = argv[1:], False, True
    runner = shlex.split(os.environ['VPA_FIT_RUNNER']) \
        if os.environ.get('VPA_FIT_RUNNER') else None
    while args[:1] and args[0].startswith('--'):
        if args[0] == '--runner' and len(args) > 1:
            runner, args = shlex.split(args[1]), args[2:]
        elif args[0] == '--strict-order':
            strict, args = True, args[1:]
        elif args[0] == '--no-recheck':
            recheck, args = False, args[1:]
        else:
            break
    if not args or (not recheck and not runner):
        sys.stderr.write(__doc__)
        return 2
    bad = 0
    for path in files(args):
        counts = {}
        scs = json.load(open(path))
        for sc in scs if recheck else []:
            probs = check_recorded(sc)
            c = sc['compare']
            key = c['verdict'] + ('(%s)' % c['category'] if 'category' in c
                                  else '')
            counts[key] = counts.get(key, 0) + 1
            if key == 'both-fit' and sc['brute']['nova_tier_cost'] > \
                    sc['brute']['best_tier_cost']:
                counts['both-fit, better tiers than Nova\'s'] = counts.get(
                    'both-fit, better tiers than Nova\'s', 0) + 1
            for p in probs:
                print('FAIL %s: %s: %s' % (os.path.basename(path), sc['name'],
                                           p))
            bad += bool(probs)
        line = '%s: %d scenarios' % (os.path.basename(path), len(scs))
        if recheck:
            line += ': ' + fmt_counts(counts)
        if runner:
            ours, probs, pref = judge_all(runner, scs, strict)
            for p in probs:
                print('FAIL %s: runner: %s' % (os.path.basename(path), p))
            bad += len(probs)
            line += '; runner: %s; Nova\'s order\'s first of least tiers ' \
                    'in %d' % (fmt_counts(ours), pref)
        print(line)
    return 1 if bad else 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
