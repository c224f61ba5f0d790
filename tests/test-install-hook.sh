#!/usr/bin/env bash
# `meson install --destdir` puts the hook where libvirtd looks for it
# (libvirt's sysconfdir, not our prefix): qemu.d/virt-pci-affinity, a
# symbolic link to the front under $libdir/virt-pci-affinity (nothing else
# in qemu.d), the module beside the front, the sample configuration, the
# man pages; a second install keeps an edited config; with its module
# missing the installed front passes a domain that does not use us (one
# warning line) and refuses one that does; `ninja uninstall` removes
# every file meson installed and leaves only the operator's config.
# What is installed comes from meson's own install log, not from a list
# kept here.
set -euo pipefail

build=${1:?usage: test-install-hook.sh BUILDDIR QEMU_D LIBDIR CONFDIR MANDIR}
qemu_d=$2 libdir=$3 confdir=$4 mandir=$5
dest=$(mktemp -d)
log=$build/meson-logs/install-log.txt
# The install log is what `ninja uninstall` removes: an operator's real
# install must not be forgotten because a test installed into a DESTDIR.
saved=$dest.install-log
[ -e "$log" ] && cp -p "$log" "$saved"
restore_log() { if [ -e "$saved" ]; then mv -f "$saved" "$log"; else rm -f "$log"; fi; }
trap 'restore_log; rm -rf "$dest"' EXIT
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
case $target in "$libdir"/*) ;; *) fail "the hook points to $target, not into $libdir" ;; esac
[ -x "$dest$target" ] || fail "the hook's target $dest$target is not executable"
grep -qF "$hook" "$log" || fail "the hook is not in meson's install log (uninstall would leave it)"
module=$libdir/virt-pci-affinity-hook-module
[ -x "$dest$module" ] || fail "$dest$module missing or not executable"
grep -qF "$module" "$dest$target" || fail "the installed hook does not run $module"
conf=$dest$confdir/virt-pci-affinity.conf
[ -f "$conf" ] || fail "$conf missing"
[ -f "$dest$mandir/man8/virt-pci-affinity-hook.8" ] || fail "man page missing"
[ -f "$dest$mandir/man1/virt-pci-affinity.1" ] || fail "virt-pci-affinity(1) missing"
grep -qE "/bash-completion/completions/virt-pci-affinity$" "$log" || fail "the bash completion is not installed"
echo "ok installed: $qemu_d/virt-pci-affinity -> $target, $module, $confdir/virt-pci-affinity.conf"

# The installed front answers libvirt without its module for a domain
# that holds nothing of ours.
run_hook() {
  env -i LC_ALL=C PATH=/usr/bin:/bin HOME=/ "$dest$target" g prepare begin - <<<"$1"
}
run_hook "<domain><name>g</name></domain>" || fail "installed hook refused a plain domain"
echo "ok the installed hook passes a plain domain"

# Its module is not installed under the real prefix: a half-removed
# install. A hostdev domain without our namespace passes with one warning
# line; one with our metadata is refused.
if [ -e "$module" ]; then
  echo "ok a missing module # SKIP $module is installed on this machine"
else
  hostdev="<domain><name>g</name><devices><hostdev mode='subsystem' type='pci'/></devices></domain>"
  err=$(run_hook "$hostdev" 2>&1) || fail "a missing module refused a domain without our metadata: $err"
  [ "$(printf '%s\n' "$err" | wc -l)" = 1 ] || fail "more than one warning line: $err"
  case $err in "virt-pci-affinity: warning: domain 'g': hook module '$module' is missing"*) ;;
    *) fail "unexpected warning: $err" ;; esac
  ours="<domain><name>g</name><metadata><vpa:affinity xmlns:vpa='http://virt-pci-affinity.org/xmlns/libvirt/domain/1.0'/></metadata>$hostdev</domain>"
  rc=0; err=$(run_hook "$ours" 2>&1) || rc=$?
  [ "$rc" = 1 ] || fail "a missing module passed a domain with our metadata (exit $rc)"
  case $err in "virt-pci-affinity: domain 'g': cannot run the hook module '$module'"*) ;;
    *) fail "unexpected refusal: $err" ;; esac
  echo "ok a missing module: plain hostdev domain passes with one warning, ours is refused"
fi

echo "# edited" >> "$conf"
meson install -C "$build" --no-rebuild --quiet --destdir "$dest" >/dev/null
grep -q "^# edited" "$conf" || fail "a second install replaced the edited configuration"
echo "ok a second install keeps the edited configuration"

ninja -C "$build" uninstall >/dev/null
left=$(cd "$dest" && find . \( -type f -o -type l \) | sort)
[ "$left" = ".$confdir/virt-pci-affinity.conf" ] || fail "uninstall left: $left"
echo "ok ninja uninstall removes the hook and everything else meson installed; keeps the config"
