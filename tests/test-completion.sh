#!/usr/bin/env bash
# The bash completion (data/bash-completion/virt-pci-affinity) as bash
# runs it: loaded by bash-completion, `complete -p` names its function,
# and scripted completions (COMP_WORDS/COMP_CWORD as bash splits a line,
# ':' apart) give the commands, the options, the --format and --group-by
# values, the domains of the -c connection, the config's aliases and
# physical networks, and files where a file is expected.
set -uo pipefail

cli=$(realpath "${1:?usage: test-completion.sh CLI COMPLETION}")
script=$(realpath "${2:?usage: test-completion.sh CLI COMPLETION}")
data=${VPA_TEST_DATA:?}
bc=/usr/share/bash-completion/bash_completion
if [ ! -r "$bc" ]; then
  echo "1..0 # SKIP bash-completion is not installed ($bc)"
  exit 0
fi
# bash-completion expects an interactive-like shell without nounset.
set +u
# shellcheck disable=SC1090
. "$bc"
# shellcheck disable=SC1090
. "$script"

n=0 failed=0
ok() { n=$((n + 1)); echo "ok $n $*"; }
notok() { n=$((n + 1)); echo "not ok $n $*"; failed=1; }

spec=$(complete -p virt-pci-affinity 2>&1)
if [ "$spec" = "complete -F _virt_pci_affinity virt-pci-affinity" ]; then ok "complete -p: $spec"
else notok "complete -p: $spec"; fi

# comp WORD...: the completions, sorted, one a line, of the words given
# (the last one is the word being completed), the CLI as words[0].
comp() {
  local w last=
  COMP_WORDS=("$cli" "$@")
  COMP_CWORD=$#
  # as bash joined them: no blank around a ':' it split off
  COMP_LINE=$cli
  for w in "$@"; do
    if [ "$w" = : ] || [ "$last" = : ]; then COMP_LINE+=$w; else COMP_LINE+=" $w"; fi
    last=$w
  done
  COMP_POINT=${#COMP_LINE}
  COMPREPLY=()
  _virt_pci_affinity "$cli" "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD - 1]}"
  printf '%s\n' "${COMPREPLY[@]}" | sort -u
}
# expect "WHAT" "WANTED (space separated, exact set)" WORD...
expect() {
  local what=$1 want got
  want=$(tr ' ' '\n' <<<"$2" | sort -u)
  shift 2
  got=$(comp "$@")
  if [ "$got" = "$want" ]; then ok "$what"
  else notok "$what: got [$(echo $got)], wanted [$(echo $want)]"; fi
}
# contains "WHAT" "WORDS that must be among the completions" WORD...
contains() {
  local what=$1 w got
  local -a need
  read -ra need <<<"$2"
  shift 2
  got=$(comp "$@")
  for w in "${need[@]}"; do
    grep -qxF -- "$w" <<<"$got" || { notok "$what: '$w' not in [$(echo $got)]"; return; }
  done
  ok "$what"
}

S=$data/hosts/dual-socket.xml
C=$data/hosts/dual-socket.conf
contains "commands" "pools devices place check define attach snapshot traits config fleet device --help --version" ""
expect "a command's prefix" "pools place" "p"
expect "fleet's commands" "sync pools filter hosts remove" fleet ""
expect "config's command" "check" config ""
expect "device's commands" "list release quarantine" device ""
contains "device quarantine's options" "--reason --config --help" device quarantine "-"
expect "device list --format" "text json" device list --format ""
contains "pools' options" "--format --group-by --output --connect --inventory --config -c -o" pools "-"
expect "pools --format" "text json openmetrics" pools --format ""
expect "devices --format" "text json" devices --format ""
expect "fleet pools --format" "text json openmetrics" fleet pools --format ""
expect "--group-by, first key" "socket" pools --group-by "so"
expect "--group-by, after a comma" "numa_node,dev_type" pools --group-by "numa_node,d"
expect "attach --policy" "required legacy preferred socket" attach web1 --policy ""
expect "attach --vnic-type" "direct direct-physical" attach web1 --vnic-type ""
expect "request: the domains of -c" "web1" request -c test : //"$S" ""
expect "request DOMAIN: what to do" "show add-port add-alias set-numa remove place" request -c test : //"$S" web1 ""
contains "check: the domains of -c test:///default (and XML files)" "test" check -c test : ///default ""
expect "attach: the domains of a snapshot" "web1" attach -c test : //"$S" ""
expect "devices --alias: the config's aliases" "GPU QuickAssist" devices --config "$C" --alias ""
VPA_CONFIG=$C expect "attach --physnet: the config's physical networks (VPA_CONFIG)" \
  "physnet1 physnet2" attach web1 --physnet ""
# COMPREPLY as it is, unsorted and not made unique (comp sorts)
comp pools --h >/dev/null
if [ "${COMPREPLY[*]}" = "--help" ]; then ok "--help offered once"
else notok "--help offered once: got [${COMPREPLY[*]}]"; fi
expect "fleet sync: only its own options" \
  "--store --host --watch --config --connect --inventory --help" fleet sync --
expect "fleet hosts: only its own options" "--store --format --help" fleet hosts --
expect "-c before the command: no command names" "" -c ""
expect "topology --devices: the config's aliases and physical networks" \
  "GPU QuickAssist physnet1 physnet2" topology --config "$C" --devices ""
expect "topology --devices, after a comma" "GPU,physnet1 GPU,physnet2" topology --config "$C" --devices "GPU,p"
expect "attach --config-file: its file's physical networks" \
  "physnet1 physnet2" attach --config-file "$C" web1 --physnet ""

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir "$work/sub"
touch "$work/dom.xml" "$work/notes.txt"
cd "$work" || exit 1
printf '[hook]\nstate-dir=%s/state\n' "$work" > "$work/r.conf"
mkdir "$work/state"
printf '# virt-pci-affinity reservations 1\n0000:81:00.0 quarantine 1 x\n' > "$work/state/reservations"
expect "device release: the reserved devices" "0000:81:00.0" device release --config "$work/r.conf" ""
rm -r "$work/state" "$work/r.conf"
expect "place: XML files and directories" "dom.xml sub" place ""
expect "--config: any file" "dom.xml notes.txt sub" pools --config ""
expect "--output: any file" "dom.xml notes.txt sub" pools --output ""
echo "1..$n"
exit "$failed"
