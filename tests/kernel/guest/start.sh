#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# Placement and the hook on a real start: the hook installed into the
# guest's libvirtd, a NUMA guest bound to node 1 defined with
# 'virt-pci-affinity define' (an NVMe VF under policy required), started
# with virsh; then the same guest bound to node 0 and a second guest
# asking for the held VF, both refused by the hook (README.md here).
. "$(dirname "$0")/common.sh"
setup
for pf in 0000:41:00.0 0000:81:00.0; do numvfs $pf 4; done
facts facts
U=qemu:///system
# The nested guest: this kernel and an initramfs the test built.
mkdir -p /tmp/nested
cp "$(ls /boot/vmlinuz-* | tail -n 1)" /tmp/nested/vmlinuz
cp "$OUT/nested-initrd.gz" /tmp/nested/initrd.gz
# The hook where meson install puts it (a link to the program), the
# configuration where the hook reads it (prefix /usr/local).
mkdir -p /etc/libvirt/hooks/qemu.d /usr/local/etc/virt-pci-affinity
ln -s "$BUILD/hooks/virt-pci-affinity-hook" /etc/libvirt/hooks/qemu.d/virt-pci-affinity
{ printf '[inventory]\nsource=sysfs:/\n\n'; cat "$CONF"; } \
  > /usr/local/etc/virt-pci-affinity/virt-pci-affinity.conf
start_libvirtd || exit 1
run define-vm1 "$CLI" define -c $U --config "$CONF" "$SRC/data/kernel/vm1.xml"
run dumpxml-vm1 virsh -c $U dumpxml --inactive vm1
run start-vm1 timeout 300 virsh -c $U start vm1
step vm1 started
vf=$(python3 "$SRC/tests/kernel/guest/domxml.py" vf "$OUT/dumpxml-vm1.out")
echo "$vf" > "$OUT/vf.out"
run vf-driver readlink "/sys/bus/pci/devices/$vf/driver"
pid=$(cat /run/libvirt/qemu/vm1.pid)
run qemu-cmdline sh -c "tr '\\0' '\\n' < /proc/$pid/cmdline"
run qemu-fds sh -c "ls -l /proc/$pid/fd | sed 's/.*-> //'"
run vf-group readlink "/sys/bus/pci/devices/$vf/iommu_group"
run state-vm1 cat /run/libvirt/qemu/vm1.xml
run check-vm1 "$CLI" check -c $U --config "$CONF" vm1
# check --live: vm1's guest RAM (allocated at start) on its node 1;
# migratepages (numactl) cannot move it: VFIO pinned it for the VF's DMA.
run live-vm1 "$CLI" check --live -c $U --format json vm1
run live-metrics "$CLI" check --live -c $U --format openmetrics vm1
run migrate-vm1 migratepages "$pid" 1 0
run live-pinned "$CLI" check --live -c $U --format json vm1
# vm2: vm1 bound to node 0 with another VF of node 1; vm3: vm1's VF.
python3 "$SRC/tests/kernel/guest/domxml.py" variant "$OUT/dumpxml-vm1.out" vm2 0 \
  "$(echo "$vf" | sed 's/\.[0-9]$/.3/')" > /tmp/vm2.xml
python3 "$SRC/tests/kernel/guest/domxml.py" variant "$OUT/dumpxml-vm1.out" vm3 1 "$vf" \
  > /tmp/vm3.xml
run define-vm2 virsh -c $U define /tmp/vm2.xml
run define-vm3 virsh -c $U define /tmp/vm3.xml
run start-vm2 timeout 300 virsh -c $U start vm2
run start-vm3 timeout 300 virsh -c $U start vm3
step refusals
# The nested kernel's view of its devices, if it gets that far in 20 s.
i=0
while [ $i -lt 10 ] && ! grep -q VPA-DONE /tmp/nested/vm1.console 2>/dev/null; do
  sleep 2
  i=$((i + 1))
done
cp /tmp/nested/vm1.console "$OUT/vm1.console" 2>/dev/null
run destroy-vm1 virsh -c $U destroy vm1
run vf-driver-after readlink "/sys/bus/pci/devices/$vf/driver"
# vm4: vm1 without a VF, 64 MiB, whose memory does move (started once
# vm1's nested TCG no longer takes the CPUs).
sed -e 's/vm1/vm4/g' -e '/<metadata>/,/<\/metadata>/d' -e 's/131072/65536/g' \
  "$SRC/data/kernel/vm1.xml" > /tmp/vm4.xml
run define-vm4 virsh -c $U define /tmp/vm4.xml
run start-vm4 timeout 300 virsh -c $U start vm4
run live-vm4 "$CLI" check --live -c $U --format json vm4
run migrate-vm4 migratepages "$(cat /run/libvirt/qemu/vm4.pid)" 1 0
run live-moved "$CLI" check --live -c $U vm4
run live-moved-json "$CLI" check --live -c $U --format json vm4
run destroy-vm4 virsh -c $U destroy vm4
step live
# Speed on a real tree, as bench/run times it: the hook's prepare begin
# on vm1 (its VF free again) and pools, against the floor of a hook
# (vpa-bench-cat) and xmllint --noout of this host's snapshot.
"$CLI" snapshot -c $U --inventory sysfs:/ --config "$CONF" > /tmp/host.xml
cat > /tmp/bench.ini <<EOF
[bench]
runs=5
warmup=1
environment=LC_ALL=C;PATH=/usr/bin:/bin;HOME=/

[command cat]
argv=$BUILD/bench/vpa-bench-cat
stdin=$OUT/dumpxml-vm1.out

[command hook]
argv=$BUILD/hooks/virt-pci-affinity-hook;vm1;prepare;begin;-
stdin=$OUT/dumpxml-vm1.out

[command xmllint]
argv=/usr/bin/xmllint;--noout;/tmp/host.xml

[command pools]
argv=$CLI;pools;-c;$U;--inventory;sysfs:/;--config;$CONF
EOF
run bench "$BUILD/bench/vpa-bench-exec" /tmp/bench.ini
step bench
