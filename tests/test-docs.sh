#!/usr/bin/env bash
# The operator's pages (docs/quickstart.md, docs/virsh.md) as they are
# written: each line of their ```sh blocks runs on the sample host
# (LIBVIRT_DEFAULT_URI its test:/// snapshot, VPA_CONFIG its
# configuration, in a scratch directory) and must exit 0, or 1 for
# `status` (no hook is installed here) and `config check` (warnings);
# each ```ini block is appended to the sample configuration and must
# pass `config check` (exit 0 or 1). The test driver keeps nothing
# between commands, so each line stands on its own; the real daemon's
# round trip is tests/libvirtd/test-request.sh.
#   test-docs.sh CLI SOURCE_ROOT
set -uo pipefail

cli=$(realpath "${1:?usage: test-docs.sh CLI SOURCE_ROOT}")
root=$(realpath "${2:?usage: test-docs.sh CLI SOURCE_ROOT}")
data=$root/data
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir "$work/bin" "$work/run"
ln -s "$cli" "$work/bin/virt-pci-affinity"
export PATH=$work/bin:$PATH
export LIBVIRT_DEFAULT_URI=test://$data/hosts/dual-socket.xml
export VPA_CONFIG=$data/hosts/dual-socket.conf

# virt-install's new domain is defined where web1 is not yet: the sample
# host without its domains.
awk '/^<domain[ >]/ { skip = 1 } !skip { print } /^<\/domain>/ { skip = 0 }' \
  "$data/hosts/dual-socket.xml" >"$work/host-without-domains.xml"

n=0 failed=0
ok() { n=$((n + 1)); echo "ok $n $*"; }
notok() { n=$((n + 1)); echo "not ok $n $*"; failed=1; }

# blocks DOC LANG: each line of the DOC's ```LANG blocks, blocks ending
# with an empty line.
blocks() {
  awk -v lang="$2" '$0 == "```" lang { on = 1; next } on && /^```/ { on = 0; print ""; next } on { print }' "$1"
}

for doc in docs/quickstart.md docs/virsh.md; do
  while IFS= read -r line; do
    [ -n "$line" ] || continue
    case $line in
      virt-install\ *)
        command -v virt-install >/dev/null || { ok "$doc: # SKIP no virt-install: $line"; continue; } ;;
      virsh\ *)
        command -v virsh >/dev/null || { ok "$doc: # SKIP no virsh: $line"; continue; } ;;
    esac
    uri=$LIBVIRT_DEFAULT_URI
    case $line in virsh\ define\ *) uri=test://$work/host-without-domains.xml ;; esac
    rc=0
    (cd "$work/run" && LIBVIRT_DEFAULT_URI=$uri bash -o pipefail -c "$line") >"$work/out" 2>"$work/err" || rc=$?
    allowed=0
    case $line in *" status"* | *"config check"*) allowed=1 ;; esac
    if [ "$rc" -eq 0 ] || [ "$rc" -le "$allowed" ]; then
      ok "$doc: $line"
    else
      notok "$doc: $line: exit $rc: $(head -c 300 "$work/err")"
    fi
  done < <(cd "$root" && blocks "$doc" sh)

  i=0
  while IFS= read -r -d '' block; do
    i=$((i + 1))
    [ -n "$block" ] || continue
    { cat "$VPA_CONFIG"; printf '\n%s\n' "$block"; } >"$work/block.conf"
    # The sample already has the groups a block shows: keep one of each.
    awk '/^\[/ { skip = seen[$0]++ } !skip' "$work/block.conf" >"$work/ini.conf"
    rc=0
    "$cli" config check --config "$work/ini.conf" >"$work/out" 2>&1 || rc=$?
    if [ "$rc" -le 1 ]; then ok "$doc: ini block $i passes config check (exit $rc)"
    else notok "$doc: ini block $i: config check exit $rc: $(head -c 300 "$work/out")"; fi
  done < <(cd "$root" && blocks "$doc" ini | awk 'BEGIN { RS = ""; ORS = "\0" } { print }')
done
echo "1..$n"
exit "$failed"
