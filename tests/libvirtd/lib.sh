# Shared set-up of the real-daemon suites, sourced with the stem of the
# suite's domain names:  . "$(dirname "$0")/lib.sh" vpa-suite
# Exits 77 (skip) without root or without a libvirtd on qemu:///system.
# Sets uri, snapshot (data/virt/host.xml, checked to hold 8 VFs), prefix
# (STEM-PID: this run's domains) and work (a temporary directory), both
# removed on exit; removes the domains runs killed before their cleanup
# left behind (they would hold the snapshot's VFs). Defines fail MESSAGE.

stem=${1:?usage: . lib.sh DOMAIN-NAME-STEM}
uri=qemu:///system
snapshot=${VPA_TEST_DATA:?}/virt/host.xml
prefix=$stem-$$

if [ "$(id -u)" -ne 0 ]; then
  echo "SKIP: the libvirtd suite needs root (run tools/run-tests as root)"
  exit 77
fi
if ! virsh -c "$uri" version >/dev/null 2>&1; then
  echo "SKIP: no libvirtd answers on $uri (start it with tests/libvirtd/start.sh)"
  exit 77
fi

work=$(mktemp -d)
cleanup() {
  for dom in $(virsh -c "$uri" list --all --name | grep "^$prefix-" || true); do
    virsh -c "$uri" undefine "$dom" >/dev/null 2>&1 || true
  done
  rm -rf "$work"
}
trap cleanup EXIT
for dom in $(virsh -c "$uri" list --all --name | grep "^$stem-[0-9]*-" || true); do
  virsh -c "$uri" destroy "$dom" >/dev/null 2>&1 || true
  virsh -c "$uri" undefine "$dom" >/dev/null 2>&1 || true
done

fail() { echo "FAIL: $*" >&2; exit 1; }

# Nothing is assignable without a device spec: admit every device of the
# snapshot (define and attach read VPA_CONFIG when --config is not given).
printf '# every device of the test snapshot\n[device-spec all]\n' > "$work/vpa.conf"
export VPA_CONFIG=$work/vpa.conf

# The suites race for the snapshot's 8 VFs (and their 2 PFs).
nvf=$(grep -c "<capability type='phys_function'>" "$snapshot")
[ "$nvf" -eq 8 ] || fail "expected 8 VFs in $snapshot, found $nvf"
