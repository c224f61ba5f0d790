#!/usr/bin/env bash
# The hook's verdict counters in `pools --format openmetrics`
# (docs/operations.md): the hook in its build tree refuses one start and,
# in audit mode, lets one through; the CLI with the same configuration
# shows both in virt_pci_affinity_hook_verdicts_total, checked by
# promtool when installed; a damaged counter file is a warning, not a
# failure of the pools.
set -euo pipefail

cli=${1:?usage: test-verdict-metrics.sh CLI HOOK}
hook=${2:?usage: test-verdict-metrics.sh CLI HOOK}
data=${VPA_TEST_DATA:?}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
n=0
failed=0
ok() { n=$((n + 1)); echo "ok $n $*"; }
notok() { n=$((n + 1)); echo "not ok $n $*"; failed=1; }
check() { if "$@"; then ok "$desc"; else notok "$desc"; fi; }

H=test://$data/hook/hosts/two-node.xml
conf() { # conf MODE: the hook tests' host with [hook] mode=MODE
  sed "s|@DATA@|$data|g" "$data/hook/configs/two-node.conf" > "$work/c.conf"
  printf '[hook]\nmode=%s\nstate-dir=%s/state\n' "$1" "$work" >> "$work/c.conf"
}
hook() { # hook OP DOMAIN: the exit status
  local rc=0
  env -i LC_ALL=C PATH=/usr/bin:/bin HOME=/root VPA_CONFIG="$work/c.conf" \
    VPA_SYSLOG_SOCKET="$work/no-log" "$hook" guest "$1" begin - \
    < "$data/hook/domains/$2" > /dev/null 2> "$work/hook.err" || rc=$?
  echo "$rc"
}
metrics() { "$cli" pools -c "$H" --config "$work/c.conf" --format openmetrics > "$work/m.prom" 2> "$work/m.err"; }
series() { grep -c '^virt_pci_affinity_hook_verdicts_total' "$work/m.prom" || true; }
value() { # value OP VERDICT REASON
  sed -n "s/^virt_pci_affinity_hook_verdicts_total{op=\"$1\",verdict=\"$2\",reason=\"$3\"} //p" "$work/m.prom"
}

conf enforce
metrics
desc="no counter file: no verdict family"; check [ "$(series)" = 0 ]

desc="enforce: the hook refuses"; check [ "$(hook prepare required-bad.xml)" = 1 ]
conf audit
desc="audit: the hook lets the start go on"; check [ "$(hook start required-bad.xml)" = 0 ]
desc="a pass is not counted"; check [ "$(hook start required-ok.xml)" = 0 ]
metrics
desc="every op, verdict and reason has a series (4 x 2 x 9)"; check [ "$(series)" = 72 ]
desc="prepare refused policy 1"; check [ "$(value prepare refused policy)" = 1 ]
desc="start would-refuse policy 1"; check [ "$(value start would-refuse policy)" = 1 ]
desc="start refused policy 0"; check [ "$(value start refused policy)" = 0 ]
desc="counter family before # EOF"; check [ "$(tail -n 1 "$work/m.prom")" = "# EOF" ]
if command -v promtool > /dev/null; then
  desc="promtool check metrics is silent"
  check promtool check metrics < "$work/m.prom"
else
  ok "promtool # SKIP not installed"
fi

printf 'garbage\n' > "$work/state/verdicts"
metrics
desc="a damaged counter file: pools still answer, without the family"; check [ "$(series)" = 0 ]
desc="... and say why in one warning"
check grep -q "^virt-pci-affinity: warning: hook verdicts not shown: $work/state/verdicts: not a verdict counter file" "$work/m.err"

echo "1..$n"
exit $failed
