#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# The layers the build enforces (docs/architecture.md): a file compiled
# with the flags of a lower layer's library cannot include an upper
# layer's header. Each check takes the real compile command of one of the
# layer's sources from the build's compile_commands.json, swaps the
# source for a one-line probe in an empty directory, and runs the
# compiler with -fsyntax-only. A wrong-way include must fail because the
# header is not found; a legal include must compile (so that a broken
# compiler or command cannot pass the test).
#
#   test-layers.py BUILDDIR SRCROOT        (TAP on stdout)
import json
import os
import shlex
import subprocess
import sys
import tempfile

# The model types of plugin/core/ that the layers above share (the
# inventory, requests, ...): legal from every layer.
CORE_MODEL = ['vpa-spec.h', 'vpa-inventory-model.h', 'vpa-request.h',
              'vpa-capacity-model.h', 'vpa-domain-model.h', 'vpa-guest-model.h',
              'vpa-plan.h']

# layer: (a source the layer's library compiles, legal headers,
#         headers of upper layers it must not see)
LAYERS = {
    'core': ('plugin/core/vpa-types.c',
             ['vpa-types.h', 'vpa-cpuset.h'] + CORE_MODEL,
             ['vpa-xml.h', 'vpa-domain.h', 'vpa-policy.h', 'vpa-inventory.h',
              'vpa-place.h', 'vpa-source.h', 'vpa-virt.h', 'vpa-live.h',
              'vpa-cli-common.h', 'vpa-fleet.h']),
    'xml': ('xml/vpa-xml.c',
            ['vpa-types.h', 'vpa-cpuset.h'] + CORE_MODEL + ['vpa-xml.h', 'vpa-domain.h',
             'vpa-rewrite.h', 'vpa-nodedev.h', 'vpa-capabilities.h',
             'vpa-snapshot.h', 'vpa-statedirs.h'],
            ['vpa-policy.h', 'vpa-guest-plan.h', 'vpa-guest-bus-rules.h', 'vpa-bind.h',
             'vpa-inventory.h', 'vpa-place.h', 'vpa-source.h',
             'vpa-sysfs.h', 'vpa-config.h', 'vpa-virt.h', 'vpa-live.h', 'vpa-cli-common.h',
             'vpa-fleet.h']),
    'policy': ('policy/vpa-policy.c',
               ['vpa-types.h', 'vpa-policy.h', 'vpa-flow.h', 'vpa-place.h',
                'vpa-locality.h', 'vpa-fit.h', 'vpa-guest-plan.h', 'vpa-guest-bus-rules.h',
                'vpa-bind.h', 'vpa-keep.h', 'vpa-decide.h', 'vpa-locality-judge.h',
                'vpa-fit-bind.h'] + CORE_MODEL,
               ['vpa-xml.h', 'vpa-domain.h', 'vpa-domain-mode.h', 'vpa-guest-topology.h',
                'vpa-rewrite.h', 'vpa-nodedev.h',
                'vpa-inventory.h', 'vpa-config.h', 'vpa-requests.h', 'vpa-capacity.h',
                'vpa-topology.h', 'vpa-pipeline.h', 'vpa-source.h', 'vpa-sysfs.h',
                'vpa-virt.h', 'vpa-live.h', 'vpa-cli-common.h', 'vpa-fleet.h']),
    'plugin': ('plugin/vpa-inventory.c',
               CORE_MODEL + ['vpa-types.h', 'vpa-domain.h', 'vpa-policy.h', 'vpa-inventory.h',
                'vpa-place.h', 'vpa-source.h', 'vpa-pipeline.h'],
               ['vpa-virt.h', 'vpa-virt-watch.h', 'vpa-virt-request.h', 'vpa-live.h',
                'vpa-cli-common.h', 'vpa-hook.h', 'vpa-output.h', 'vpa-fleet.h',
                'vpa-fleet-store.h', 'vpa-fleet-filter.h', 'vpa-fleet-hosts.h']),
    # libvpa-virt and libvpa-live (virt/): every layer below, and their
    # own; neither the fleet's nor the front ends'.
    'virt': ('virt/vpa-virt.c',
             ['vpa-types.h', 'vpa-xml.h', 'vpa-policy.h', 'vpa-source.h',
              'vpa-pipeline.h', 'vpa-virt.h', 'vpa-virt-watch.h', 'vpa-live.h'],
             ['vpa-fleet.h', 'vpa-fleet-store.h', 'vpa-cli-common.h', 'vpa-hook.h',
              'vpa-output.h']),
    # The fleet store (fleet/): every layer below it and its own headers;
    # neither libvpa-virt's nor the front ends'.
    'fleet': ('fleet/vpa-fleet.c',
              ['vpa-types.h', 'vpa-xml.h', 'vpa-policy.h', 'vpa-inventory.h',
               'vpa-fleet.h', 'vpa-fleet-store.h', 'vpa-fleet-schema.h',
               'vpa-fleet-rows.h', 'vpa-fleet-filter.h', 'vpa-fleet-hosts.h',
               'vpa-fleet-preselect.h'],
              ['vpa-virt.h', 'vpa-live.h', 'vpa-cli-common.h', 'vpa-output.h',
               'vpa-cli-fleet.h']),
    # The top: it sees every layer (the positive control for the
    # headers the layers below must not see).
    'hooks': ('hooks/vpa-cli.c',
              ['vpa-types.h', 'vpa-xml.h', 'vpa-policy.h', 'vpa-place.h',
               'vpa-virt.h', 'vpa-cli-common.h', 'vpa-output.h', 'vpa-hook.h'],
              []),
}


def command_for(db, top, source):
    for e in db:
        path = os.path.normpath(os.path.join(e['directory'], e['file']))
        if path == os.path.join(top, source):
            return e['directory'], shlex.split(e['command'])
    return None, None


def probe_command(argv, probe):
    out, skip = [], False
    for a in argv:
        if skip:
            skip = False
            continue
        if a in ('-o', '-MQ', '-MF', '-MT', '-c'):
            skip = True
            continue
        if a in ('-MD', '-MMD') or a.startswith('-fdiagnostics-color'):
            continue
        out.append(a)
    return out + ['-fsyntax-only', probe]


def main():
    builddir, top = (os.path.abspath(a) for a in sys.argv[1:3])
    db = json.load(open(os.path.join(builddir, 'compile_commands.json')))
    checks = []
    for layer, (source, legal, forbidden) in LAYERS.items():
        for h in legal:
            checks.append((layer, source, h, True))
        for h in forbidden:
            checks.append((layer, source, h, False))
    print('1..%d' % len(checks))
    failed = 0
    with tempfile.TemporaryDirectory(prefix='vpa-layers-') as tmp:
        probe = os.path.join(tmp, 'probe.c')
        for n, (layer, source, header, want_ok) in enumerate(checks, 1):
            cwd, argv = command_for(db, top, source)
            what = '%s layer (%s) %s "%s"' % (layer, source,
                                              'includes' if want_ok else 'cannot include',
                                              header)
            if argv is None:
                print('not ok %d - %s: %s not in compile_commands.json' % (n, what, source))
                failed += 1
                continue
            with open(probe, 'w') as f:
                f.write('#include "%s"\nint vpa_layers_probe (void);\n'
                        'int vpa_layers_probe (void) { return 0; }\n' % header)
            r = subprocess.run(probe_command(argv, probe), cwd=cwd,
                               capture_output=True, text=True)
            not_found = (r.returncode != 0 and header in r.stderr
                         and 'No such file' in r.stderr)
            if want_ok and r.returncode == 0:
                print('ok %d - %s' % (n, what))
            elif not want_ok and not_found:
                print('ok %d - %s' % (n, what))
            else:
                failed += 1
                print('not ok %d - %s: the compiler %s' %
                      (n, what, 'refused it' if want_ok else
                       'accepted it (the layering is broken)' if r.returncode == 0
                       else 'failed for another reason'))
                for line in r.stderr.splitlines()[:10]:
                    print('# ' + line)
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main())
