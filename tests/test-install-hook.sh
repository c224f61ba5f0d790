#!/usr/bin/env bash
# `meson install --destdir` puts the hook where libvirt and an operator
# expect it: the front as qemu.d/virt-pci-affinity (and nothing else in
# qemu.d), the module (an executable the front runs) under
# $libdir/virt-pci-affinity with nothing but the CLI's modules, the sample
# configuration, the man page; a second install keeps an edited config.
set -euo pipefail

build=${1:?usage: test-install-hook.sh BUILDDIR QEMU_D LIBDIR CONFDIR MANDIR}
qemu_d=$2 libdir=$3 confdir=$4 mandir=$5
dest=$(mktemp -d)
trap 'rm -rf "$dest"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

meson install -C "$build" --no-rebuild --quiet --destdir "$dest" >/dev/null

hook=$dest$qemu_d/virt-pci-affinity
[ -x "$hook" ] || fail "$hook missing or not executable"
[ "$(ls "$dest$qemu_d")" = virt-pci-affinity ] || fail "qemu.d holds more than the hook: $(ls "$dest$qemu_d")"
module=$libdir/virt-pci-affinity-hook-module
[ -x "$dest$module" ] || fail "$dest$module missing or not executable"
# The CLI's modules share the directory (tests/test-install-cli.sh).
others=$(ls "$dest$libdir" | grep -vxE 'virt-pci-affinity-(virt|fleet)\.so' || true)
[ "$others" = virt-pci-affinity-hook-module ] || fail "$libdir holds more than the module: $others"
grep -qF "$module" "$hook" || fail "the installed hook does not run $module"
conf=$dest$confdir/virt-pci-affinity.conf
[ -f "$conf" ] || fail "$conf missing"
[ -f "$dest$mandir/man8/virt-pci-affinity-hook.8" ] || fail "man page missing"
echo "ok installed: ${qemu_d}/virt-pci-affinity, $module, $confdir/virt-pci-affinity.conf, $mandir/man8/virt-pci-affinity-hook.8"

# The installed front answers libvirt without its module for a domain
# that holds nothing of ours.
echo "<domain><name>g</name></domain>" | env -i LC_ALL=C PATH=/usr/bin:/bin HOME=/ \
  "$hook" g prepare begin - || fail "installed hook refused a plain domain"

echo "# edited" >> "$conf"
meson install -C "$build" --no-rebuild --quiet --destdir "$dest" >/dev/null
grep -q "^# edited" "$conf" || fail "a second install replaced the edited configuration"
echo "ok a second install keeps the edited configuration"
