#!/usr/bin/env bash
# The CLI loads libvirt and the fleet store only for the commands that
# need them (hooks/vpa-cli-module.h): it does not link them; snapshot and
# sysfs commands never map a module and give the same output with no
# module at hand; a live URI or `fleet` loads its module from next to the
# executable; a missing, broken or stale module is exit 3 with one line
# naming its path.
set -euo pipefail

cli=${1:?usage: test-cli-modules.sh CLI VIRT-MODULE FLEET-MODULE STALE-MODULE MODULEDIR}
virt=$2 fleet=$3 stale=$4 moduledir=$5
data=${VPA_TEST_DATA:?}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

n=0 failed=0
ok() { n=$((n + 1)); echo "ok $n $1"; }
not_ok() { n=$((n + 1)); failed=1; echo "not ok $n $1"; shift; printf '# %s\n' "$@"; }
check() { # NAME CONDITION-COMMAND...
  local name=$1; shift
  if "$@"; then ok "$name"; else not_ok "$name" "failed: $*"; fi
}

# run OUT CMD...: stdout, stderr and status of CMD into OUT.{out,err,rc}
run() {
  local out=$1; shift
  local rc=0
  "$@" >"$out.out" 2>"$out.err" || rc=$?
  echo "$rc" >"$out.rc"
}

# 1. The executable links neither libvirt nor the fleet back ends.
needed=$(readelf -d "$cli" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p')
if echo "$needed" | grep -Eq 'libvirt|sqlite|libpq'; then
  not_ok "the CLI links libvpa, GLib, libxml2, json-glib only" "$needed"
else
  ok "the CLI links libvpa, GLib, libxml2, json-glib only"
fi

# 2. Snapshot and sysfs commands map no module (LD_DEBUG=files lists
# every object the loader opens) and print the same with no module at
# hand (a copy of the executable alone).
snap="test://$data/hosts/dual-socket.xml"
conf=$data/hosts/dual-socket.conf
sysfs="sysfs:$data/sysfs-mini"
mkdir "$tmp/alone"
cp "$cli" "$tmp/alone/virt-pci-affinity"
commands=(
  "pools -c $snap --config $conf"
  "pools -c $snap --config $conf --format json --group-by numa_node"
  "traits -c $snap --config $conf"
  "place -c $snap --config $conf --explain $data/domains/demo.xml"
  "check -c $snap --config $conf $data/domains/placed.xml"
  "snapshot -c $snap --config $conf"
  "pools --inventory $sysfs -c $snap --config $conf"
  "snapshot --inventory $sysfs -c $snap --config $conf"
  "traits --inventory $sysfs -c $data/hosts/dual-socket.xml"
  "pools -c $data/hosts/dual-socket.xml --config $conf"
)
i=0
for c in "${commands[@]}"; do
  i=$((i + 1))
  name=${c//$data/data}
  # shellcheck disable=SC2086
  run "$tmp/b$i" env LD_DEBUG=files LD_DEBUG_OUTPUT="$tmp/ld$i" "$cli" $c
  # shellcheck disable=SC2086
  run "$tmp/a$i" "$tmp/alone/virt-pci-affinity" $c
  loaded=$(cat "$tmp/ld$i".* | sed -n 's/.*file=\([^ ]*\).*/\1/p' | sort -u)
  if echo "$loaded" | grep -Eq 'virt-pci-affinity-(virt|fleet)|libvirt|sqlite|libpq'; then
    not_ok "no module for: $name" $loaded
  elif [ "$(cat "$tmp/b$i.rc")" -gt 1 ] || [ ! -s "$tmp/b$i.out" ]; then
    not_ok "no module for: $name" "status $(cat "$tmp/b$i.rc")" "$(cat "$tmp/b$i.err")"
  else
    ok "no module for: $name"
  fi
  if cmp -s "$tmp/a$i.out" "$tmp/b$i.out" && cmp -s "$tmp/a$i.err" "$tmp/b$i.err" &&
     cmp -s "$tmp/a$i.rc" "$tmp/b$i.rc"; then
    ok "the same without modules: $name"
  else
    not_ok "the same without modules: $name" "$(diff "$tmp/a$i.out" "$tmp/b$i.out" | head -5)" \
      "$(cat "$tmp/a$i.err")"
  fi
done

# 3. A live URI loads the libvirt module next to the executable; the
# fleet commands load theirs, and not libvirt for a snapshot.
loaded_by() { # NAME: the objects the loader opened in run NAME
  cat "$tmp/ld-$1".* | sed -n 's/.*file=\([^ ]*\).*/\1/p' | sort -u
}
run "$tmp/live" env LD_DEBUG=files LD_DEBUG_OUTPUT="$tmp/ld-live" \
  "$cli" pools -c test:///default --config "$conf"
check "pools on test:///default succeeds" [ "$(cat "$tmp/live.rc")" = 0 ]
check "pools on test:///default loads $virt" grep -qxF "$virt" <(loaded_by live)
run "$tmp/byname" env LD_DEBUG=files LD_DEBUG_OUTPUT="$tmp/ld-byname" \
  "$cli" check -c test:///default --config "$conf" no-such-domain
check "check DOMAIN asks libvirt" \
  [ "$(cat "$tmp/byname.err")" = "virt-pci-affinity: no domain or file 'no-such-domain' on 'test:///default'" ]
check "check DOMAIN loads $virt" grep -qxF "$virt" <(loaded_by byname)

run "$tmp/sync" env LD_DEBUG=files LD_DEBUG_OUTPUT="$tmp/ld-sync" \
  "$cli" fleet sync --store "$tmp/fleet.db" --host h1 -c "$snap" --config "$conf"
check "fleet sync of a snapshot succeeds" [ "$(cat "$tmp/sync.out")" = "h1: 38 devices" ]
check "fleet sync loads $fleet" grep -qxF "$fleet" <(loaded_by sync)
if loaded_by sync | grep -Eq 'virt-pci-affinity-virt|libvirt'; then
  not_ok "fleet sync of a snapshot does not load libvirt" $(loaded_by sync)
else
  ok "fleet sync of a snapshot does not load libvirt"
fi
run "$tmp/fpools" "$cli" fleet pools --store "$tmp/fleet.db"
check "fleet pools lists the synced host" grep -q '^h1 ' "$tmp/fpools.out"
run "$tmp/flive" "$cli" fleet sync --store "$tmp/fleet.db" --host h2 -c test:///default
check "fleet sync of test:///default succeeds" [ "$(cat "$tmp/flive.rc")" = 0 ]

# 4. A stale, broken or missing module: exit 3, one line naming it.
expect_fail() { # NAME RUN EXPECTED-LINE (a prefix when it ends in '*')
  local name=$1 r=$2 want=$3 got
  got=$(cat "$r.err")
  # shellcheck disable=SC2053
  if [ "$(cat "$r.rc")" = 3 ] && [ "$(wc -l <"$r.err")" = 1 ] && [[ $got == $want ]]; then
    ok "$name"
  else
    not_ok "$name" "status $(cat "$r.rc"), stderr: $got" "expected: $want"
  fi
}
mkdir "$tmp/stale" "$tmp/broken"
cp "$cli" "$tmp/stale/virt-pci-affinity"
cp "$stale" "$tmp/stale/virt-pci-affinity-virt.so"
cp "$fleet" "$tmp/stale/virt-pci-affinity-fleet.so"
run "$tmp/s1" "$tmp/stale/virt-pci-affinity" pools -c test:///default
expect_fail "a stale libvirt module" "$tmp/s1" \
  "virt-pci-affinity: cannot load module '$tmp/stale/virt-pci-affinity-virt.so': interface version 7, expected 6"
run "$tmp/s2" "$tmp/stale/virt-pci-affinity" fleet sync --store "$tmp/s.db" --host h -c test:///default
expect_fail "a stale libvirt module, through fleet" "$tmp/s2" \
  "virt-pci-affinity: fleet: cannot load module '$tmp/stale/virt-pci-affinity-virt.so': interface version 7, expected 6"
cp "$cli" "$tmp/broken/virt-pci-affinity"
echo "not a module" >"$tmp/broken/virt-pci-affinity-virt.so"
cp "$tmp/broken/virt-pci-affinity-virt.so" "$tmp/broken/virt-pci-affinity-fleet.so"
run "$tmp/b1" "$tmp/broken/virt-pci-affinity" define -c test:///default "$data/domains/demo.xml"
expect_fail "a broken libvirt module" "$tmp/b1" \
  "virt-pci-affinity: cannot load module '$tmp/broken/virt-pci-affinity-virt.so': *"
run "$tmp/b2" "$tmp/broken/virt-pci-affinity" fleet pools --store "$tmp/fleet.db"
expect_fail "a broken fleet module" "$tmp/b2" \
  "virt-pci-affinity: cannot load module '$tmp/broken/virt-pci-affinity-fleet.so': *"
if [ -e "$moduledir/virt-pci-affinity-virt.so" ]; then
  ok "a missing module # SKIP installed in $moduledir"
else
  run "$tmp/m1" "$tmp/alone/virt-pci-affinity" pools -c test:///default
  expect_fail "a missing module names the installed path" "$tmp/m1" \
    "virt-pci-affinity: cannot load module '$moduledir/virt-pci-affinity-virt.so': *"
fi

echo "1..$n"
exit $failed
