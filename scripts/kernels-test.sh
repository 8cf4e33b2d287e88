#!/usr/bin/env bash
# Checks every SIMD level of CEngramKernels against the scalar reference with the C driver
# Tests/KernelsDriver/kernels_driver.c:
#   - natively, once per level this CPU has (ENGRAM_CPU_LEVEL forces each one), and
#   - on x86-64 hosts, the NEON level too: the kernels and the driver cross-compiled with
#     aarch64-linux-gnu-gcc (static) and run under qemu-aarch64 (qemu-user), at neon and at
#     scalar. `make test` runs this; scripts/setup.sh installs the cross tools.
# Nothing is skipped: a missing tool fails with the command that installs it.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
kernels="$root/Sources/CEngramKernels"
driver="$root/Tests/KernelsDriver/kernels_driver.c"
out="$root/.build/kernels-test"
mkdir -p "$out"
fail() { printf 'kernels-test: %s\n' "$*" >&2; exit 1; }

cc="${CC:-cc}"
command -v "$cc" >/dev/null || fail "no C compiler ($cc): apt-get install gcc"
"$cc" -std=gnu11 -O2 -Wall -Wextra -Werror -I"$kernels/include" "$kernels"/*.c "$driver" \
  -o "$out/driver-native" -lpthread -lm
case "$(uname -m)" in
  x86_64)
    levels="scalar"
    if grep -qw avx2 /proc/cpuinfo && grep -qw fma /proc/cpuinfo; then levels="$levels avx2"; fi
    if grep -qw avx512f /proc/cpuinfo && grep -qw avx512bw /proc/cpuinfo && grep -qw avx512vl /proc/cpuinfo; then
      levels="$levels avx512"
    fi
    ;;
  aarch64) levels="scalar neon" ;;
  *) levels="scalar" ;;
esac
for level in $levels; do
  ENGRAM_CPU_LEVEL=$level "$out/driver-native" "$level"
done

if [ "$(uname -m)" = x86_64 ]; then
  cross=aarch64-linux-gnu-gcc
  qemu=""
  for candidate in qemu-aarch64 qemu-aarch64-static; do
    command -v "$candidate" >/dev/null && { qemu="$candidate"; break; }
  done
  command -v "$cross" >/dev/null ||
    fail "$cross is missing: run scripts/setup.sh (apt-get install gcc-aarch64-linux-gnu libc6-dev-arm64-cross)"
  [ -n "$qemu" ] || fail "qemu-aarch64 is missing: run scripts/setup.sh (apt-get install qemu-user)"
  "$cross" -std=gnu11 -O2 -Wall -Wextra -Werror -static -I"$kernels/include" "$kernels"/*.c "$driver" \
    -o "$out/driver-aarch64" -lpthread -lm ||
    fail "cross-compiling failed (is libc6-dev-arm64-cross installed? run scripts/setup.sh)"
  "$qemu" "$out/driver-aarch64" neon
  ENGRAM_CPU_LEVEL=scalar "$qemu" "$out/driver-aarch64" scalar
fi
