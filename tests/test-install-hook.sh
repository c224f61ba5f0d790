#!/usr/bin/env bash
# `meson install --destdir` puts the hook where libvirtd looks for it
# (libvirt's sysconfdir, not our prefix): qemu.d/virt-pci-affinity, a
# symbolic link (nothing else in qemu.d) to the one hook program under
# $libexecdir/virt-pci-affinity; $libdir/virt-pci-affinity holds the CLI's
# modules only; the sample configuration, the man pages and the
# completion are installed; the installed hook ignores VPA_CONFIG; a
# second install keeps an edited config; `ninja uninstall` removes every
# file meson installed and leaves only the operator's config. What is
# installed comes from meson's own install log, not from a list kept here.
set -euo pipefail

build=${1:?usage: test-install-hook.sh BUILDDIR QEMU_D LIBDIR CONFDIR MANDIR HOOKDIR STATEDIR}
qemu_d=$2 libdir=$3 confdir=$4 mandir=$5 hookdir=${6:?} statedir=${7:?}
dest=$(mktemp -d)
log=$build/meson-logs/install-log.txt
# The install log is what `ninja uninstall` removes: an operator's real
# install must not be forgotten because a test installed into a DESTDIR.
saved=$dest.install-log
[ -e "$log" ] && cp -p "$log" "$saved"
restore_log() { if [ -e "$saved" ]; then mv -f "$saved" "$log"; else rm -f "$log"; fi; }
# The installed hook counts its refusal below in the real [hook]
# state-dir, as an installed copy must: the first directory of it that
# did not exist is removed again, so the host is left as it was.
made=
for d in "$statedir" "$(dirname "$statedir")" "$(dirname "$(dirname "$statedir")")"; do
  [ -e "$d" ] || made=$d
done
forget_state() { if [ -n "$made" ]; then rm -rf "$made"; fi; }
trap 'restore_log; forget_state; rm -rf "$dest"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

meson install -C "$build" --no-rebuild --quiet --destdir "$dest" >/dev/null
n=0
while read -r f; do
  case $f in "#"*|"") continue ;; esac
  [ -e "$f" ] || [ -L "$f" ] || fail "$f is in the install log but not installed"
  case $f in "$dest"/*) ;; *) fail "$f installed outside DESTDIR" ;; esac
  n=$((n + 1))
done < "$log"
echo "ok meson installed $n paths, all under DESTDIR"

hook=$dest$qemu_d/virt-pci-affinity
[ -L "$hook" ] || fail "$hook missing or not a symbolic link"
[ "$(ls "$dest$qemu_d")" = virt-pci-affinity ] || fail "qemu.d holds more than the hook: $(ls "$dest$qemu_d")"
target=$(realpath -m "$dest$qemu_d/$(readlink "$hook")")
target=${target#"$dest"}
case $target in "$hookdir"/*) ;; *) fail "the hook points to $target, not into $hookdir" ;; esac
[ -x "$dest$target" ] || fail "the hook's program $dest$target is not executable"
grep -qF "$hook" "$log" || fail "the hook is not in meson's install log (uninstall would leave it)"
# The CLI's modules alone in $libdir/virt-pci-affinity (tests/test-install-cli.sh).
others=$(ls "$dest$libdir" | grep -vxE 'virt-pci-affinity-(virt|fleet)\.so' || true)
[ -z "$others" ] || fail "$libdir holds more than the CLI's modules: $others"
conf=$dest$confdir/virt-pci-affinity.conf
[ -f "$conf" ] || fail "$conf missing"
[ -f "$dest$mandir/man8/virt-pci-affinity-hook.8" ] || fail "man page missing"
[ -f "$dest$mandir/man1/virt-pci-affinity.1" ] || fail "virt-pci-affinity(1) missing"
grep -qE "/bash-completion/completions/virt-pci-affinity$" "$log" || fail "the bash completion is not installed"
echo "ok installed: $qemu_d/virt-pci-affinity -> $target, $confdir/virt-pci-affinity.conf, the man pages, the completion"

# The installed hook answers a domain that holds nothing of ours.
echo "<domain><name>g</name></domain>" | env -i LC_ALL=C PATH=/usr/bin:/bin HOME=/ \
  "$hook" g prepare begin - || fail "installed hook refused a plain domain"
echo "ok the installed hook passes a plain domain"

# An installed copy never takes its configuration from the environment
# (only the hook in its build tree does): a VPA_CONFIG naming a broken
# file changes nothing.
bad=$dest/bad.conf
printf '[inventory]\nsource=\n[nonsense\n' > "$bad"
hostdev="<domain><name>g</name><devices><hostdev mode='subsystem' type='pci'><source><address domain='0' bus='0x3b' slot='0' function='0'/></source></hostdev></devices></domain>"
out=$(echo "$hostdev" | env -i LC_ALL=C PATH=/usr/bin:/bin HOME=/ VPA_CONFIG="$bad" \
  "$hook" g prepare begin - 2>&1 || true)
case $out in *"$bad"*) fail "the installed hook read VPA_CONFIG: $out" ;; esac
echo "ok the installed hook ignores VPA_CONFIG"

echo "# edited" >> "$conf"
meson install -C "$build" --no-rebuild --quiet --destdir "$dest" >/dev/null
grep -q "^# edited" "$conf" || fail "a second install replaced the edited configuration"
echo "ok a second install keeps the edited configuration"

ninja -C "$build" uninstall >/dev/null
left=$(cd "$dest" && find . \( -type f -o -type l \) ! -name bad.conf | sort)
[ "$left" = ".$confdir/virt-pci-affinity.conf" ] || fail "uninstall left: $left"
echo "ok ninja uninstall removes the hook and everything else meson installed; keeps the config"
