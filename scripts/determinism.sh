#!/bin/sh
# scripts/determinism.sh [--steps N]: the determinism matrix.
#
# Builds the core-only probe tests/determinism/gk_chain.c with gcc and
# clang at -O0 and -O3 for x86-64, with gcc -m32 for i386 and with Debian's
# aarch64 cross gcc (run under qemu-user), runs each over the same inputs
# (every genre's bots from a fixed seed, the 90 published push-puzzle
# solutions) and requires byte-identical hash chains from all of them.
# i386 binaries run natively where the kernel can, else under qemu-i386.
set -eu
cd "$(dirname "$0")/.."
. scripts/lib.sh
# gcc-multilib conflicts with Debian's cross compilers, so -m32 comes from
# its parts: the i386 libc and gcc's 32-bit runtime.
gk_install meson ninja-build pkg-config gcc clang python3 libxxhash-dev \
  libc6-dev-i386 lib32gcc-12-dev gcc-aarch64-linux-gnu \
  libc6-dev-arm64-cross qemu-user
steps=${2:-6000}
[ "${1:-}" = "--steps" ] || steps=6000
root=build-det
mkdir -p "$root/xxinc"
# xxHash is header-only here; cross compilers do not search /usr/include.
cp /usr/include/xxhash.h "$root/xxinc/"
xx="-I$PWD/$root/xxinc"

# The i386 cross file needs an exe wrapper only if the kernel cannot run
# 32-bit code (no IA32 emulation, as on some VMs).
printf 'int main(void){return 0;}\n' > "$root/probe32.c"
gcc -m32 "$root/probe32.c" -o "$root/probe32"
cp tests/determinism/i386.ini "$root/i386.ini"
if ! "$root/probe32" 2>/dev/null; then
  printf "exe_wrapper = ['qemu-i386', '-L', '/']\n" > "$root/wrap.ini"
  # [binaries] must hold the wrapper: rebuild the file with it inside.
  awk -v w="$(cat "$root/wrap.ini")" '{print} /^\[binaries\]/{print w}' \
    tests/determinism/i386.ini > "$root/i386.ini"
fi

variants="gcc-O0 gcc-O3 clang-O0 clang-O3 i386-O0 i386-O3 aarch64-O0 aarch64-O3"
status=0
first=""
for v in $variants; do
  dir=$root/$v
  opt=${v##*-O}
  cross=""
  cc=gcc
  case $v in
    clang-*) cc=clang ;;
    i386-*) cross="--cross-file $root/i386.ini" ;;
    aarch64-*) cross="--cross-file tests/determinism/aarch64.ini" ;;
  esac
  if [ ! -f "$dir/build.ninja" ]; then
    # shellcheck disable=SC2086
    CC=$cc meson setup "$dir" -Dcore_only=true -Dbuildtype=plain \
      -Doptimization="$opt" -Dc_args="$xx" $cross > "$dir.setup.log" 2>&1 \
      || { cat "$dir.setup.log"; exit 1; }
  fi
  meson compile -C "$dir" gk-chain > "$dir.build.log" 2>&1 \
    || { cat "$dir.build.log"; exit 1; }
  wrap=""
  case $v in
    aarch64-*) wrap="qemu-aarch64 -L /usr/aarch64-linux-gnu" ;;
    i386-*) [ -f "$root/wrap.ini" ] && wrap="qemu-i386 -L /" ;;
  esac
  # shellcheck disable=SC2086
  if ! $wrap "$dir/tests/determinism/gk-chain" --steps "$steps" \
      tests/data/push-puzzle > "$root/$v.txt"; then
    echo "FAIL $v: the probe did not complete"
    status=1
    continue
  fi
  if [ -z "$first" ]; then
    first=$v
    echo "$v: $(wc -l < "$root/$v.txt") runs (reference)"
  elif cmp -s "$root/$first.txt" "$root/$v.txt"; then
    echo "$v: identical to $first"
  else
    echo "FAIL $v differs from $first:"
    diff "$root/$first.txt" "$root/$v.txt" | head -20
    status=1
  fi
done
[ $status -eq 0 ] && echo "determinism matrix: all $(echo $variants | wc -w) variants identical"
exit $status
