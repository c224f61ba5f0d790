#!/usr/bin/env bash
# Real-daemon suite: concurrent defines on qemu:///system never hand out
# one device twice, and the define lock dies with a SIGKILLed holder.
# Needs root and a running libvirtd (tests/libvirtd/start.sh); exits 77
# (skip) otherwise.
set -euo pipefail

helper=${1:?usage: test-define.sh VIRT-DEFINE-HELPER}
. "$(dirname "$0")/lib.sh" vpa-suite

# "dddd:bb:ss.f" of every <interface type='hostdev'> source in a domain XML.
hostdev_addresses() {
  local n i a
  n=$(xmllint --xpath "count(//devices/interface[@type='hostdev'])" "$1")
  for i in $(seq 1 "$n"); do
    a="//devices/interface[@type='hostdev'][$i]/source/address"
    printf '%04x:%02x:%02x.%x\n' \
      "$(xmllint --xpath "string($a/@domain)" "$1")" "$(xmllint --xpath "string($a/@bus)" "$1")" \
      "$(xmllint --xpath "string($a/@slot)" "$1")" "$(xmllint --xpath "string($a/@function)" "$1")"
  done
}

# 16 defines race for the snapshot's 8 VFs.
pids=()
for i in $(seq 1 16); do
  "$helper" define "$uri" "$prefix-$i" "$snapshot" >"$work/$i.out" 2>"$work/$i.err" &
  pids+=($!)
done
ok=0; refused=0
for i in $(seq 1 16); do
  rc=0; wait "${pids[$((i - 1))]}" || rc=$?
  case $rc in
    0) ok=$((ok + 1)) ;;
    1) refused=$((refused + 1))
       grep -q "no free VF for domain '$prefix-$i'" "$work/$i.err" ||
         fail "define $i refused for another reason: $(cat "$work/$i.err")" ;;
    *) fail "define $i exited $rc: $(cat "$work/$i.err")" ;;
  esac
done
[ "$ok" -eq 8 ] || fail "$ok defines succeeded, expected 8"
[ "$refused" -eq 8 ] || fail "$refused defines refused, expected 8"

# The helpers' word and libvirt's definitions agree, 8 distinct addresses.
cat "$work"/*.out | awk '{print $2}' | sort >"$work/reported"
[ "$(sort -u "$work/reported" | wc -l)" -eq 8 ] || fail "addresses handed out twice: $(tr '\n' ' ' <"$work/reported")"
for dom in $(virsh -c "$uri" list --all --name | grep "^$prefix-"); do
  virsh -c "$uri" dumpxml --inactive "$dom" >"$work/$dom.xml"
  hostdev_addresses "$work/$dom.xml"
done | sort >"$work/defined"
diff -u "$work/reported" "$work/defined" || fail "libvirt's definitions differ from what the defines reported"
echo "ok 1 - 16 concurrent defines: 8 defined with distinct VFs, 8 refused"

# Concurrent hot-plug (--config) under the same lock: every VF is taken,
# so each attach must be refused, and nothing attached.
pids=(); n=0
for dom in $(virsh -c "$uri" list --all --name | grep "^$prefix-" | head -n 4); do
  n=$((n + 1))
  "$helper" attach "$uri" "$dom" "$snapshot" >"$work/a$n.out" 2>"$work/a$n.err" &
  pids+=($!)
done
[ "$n" -eq 4 ] || fail "expected 4 defined domains to attach to, found $n"
for i in 1 2 3 4; do
  rc=0; wait "${pids[$((i - 1))]}" || rc=$?
  [ "$rc" -eq 1 ] || fail "attach $i exited $rc, expected 1: $(cat "$work/a$i.err")"
done
echo "ok 2 - attaches with every VF held are refused"

# Free two VFs, then four attaches race for them: exactly two win.
for dom in $(virsh -c "$uri" list --all --name | grep "^$prefix-" | head -n 2); do
  virsh -c "$uri" undefine "$dom" >/dev/null
done
targets=$(virsh -c "$uri" list --all --name | grep "^$prefix-" | head -n 4)
pids=(); n=0
for dom in $targets; do
  n=$((n + 1))
  "$helper" attach "$uri" "$dom" "$snapshot" >"$work/b$n.out" 2>"$work/b$n.err" &
  pids+=($!)
done
won=0
for i in $(seq 1 "$n"); do
  rc=0; wait "${pids[$((i - 1))]}" || rc=$?
  case $rc in
    0) won=$((won + 1)) ;;
    1) ;;
    *) fail "attach $i exited $rc: $(cat "$work/b$i.err")" ;;
  esac
done
[ "$won" -eq 2 ] || fail "$won of 4 attaches succeeded, expected 2"
cat "$work"/b*.out | awk '{print $2}' | sort | uniq -d | grep . && fail "attach handed out a VF twice"
echo "ok 3 - 4 concurrent attaches for 2 free VFs: 2 attached"

# The lock dies with its holder, even on SIGKILL.
"$helper" lock "$uri" 1000 60 >"$work/holder.out" &
holder=$!
for _ in $(seq 50); do grep -q locked "$work/holder.out" && break; sleep 0.1; done
grep -q locked "$work/holder.out" || fail "the lock holder never took the lock"
rc=0; "$helper" lock "$uri" 200 0 2>"$work/wait.err" || rc=$?
[ "$rc" -eq 3 ] || fail "a second locker exited $rc while the lock was held, expected 3"
grep -q "held by pid $holder" "$work/wait.err" || fail "timeout message lacks the holder: $(cat "$work/wait.err")"
kill -9 "$holder"
wait "$holder" 2>/dev/null || true
"$helper" lock "$uri" 1000 0 >/dev/null || fail "the lock was not released by SIGKILL"
echo "ok 4 - the define lock is released when its holder is killed"
