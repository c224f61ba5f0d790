#!/usr/bin/env bash
# `meson install --destdir` puts the hook where libvirt and an operator
# expect it: one program as qemu.d/virt-pci-affinity (and nothing else in
# qemu.d; nothing of the hook's under $libdir/virt-pci-affinity, which
# holds the CLI's modules only), the sample configuration, the man page;
# a second install keeps an edited config.
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
# The CLI's modules alone in $libdir/virt-pci-affinity (tests/test-install-cli.sh).
others=$(ls "$dest$libdir" | grep -vxE 'virt-pci-affinity-(virt|fleet)\.so' || true)
[ -z "$others" ] || fail "$libdir holds more than the CLI's modules: $others"
conf=$dest$confdir/virt-pci-affinity.conf
[ -f "$conf" ] || fail "$conf missing"
[ -f "$dest$mandir/man8/virt-pci-affinity-hook.8" ] || fail "man page missing"
echo "ok installed: ${qemu_d}/virt-pci-affinity, $confdir/virt-pci-affinity.conf, $mandir/man8/virt-pci-affinity-hook.8"

# The installed hook answers a domain that holds nothing of ours.
echo "<domain><name>g</name></domain>" | env -i LC_ALL=C PATH=/usr/bin:/bin HOME=/ \
  "$hook" g prepare begin - || fail "installed hook refused a plain domain"

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
