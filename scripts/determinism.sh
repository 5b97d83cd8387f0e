#!/bin/sh
# scripts/determinism.sh [--steps N]: the determinism matrix.
#
# Builds the portable part of the project (-Dportable_only: the core and
# src/net's portable lockstep library, no libuv, ENet, cJSON or Criterion)
# with gcc and clang at -O0 and -O3 for x86-64, with gcc -m32 for i386,
# with Debian's aarch64 cross gcc (run under qemu-user) and with Debian's
# emscripten for WebAssembly at -O0, -O2 and -Os, and at -Os with the
# browser client's -msimd128 -msse2 (run under node; the cross file is
# tests/determinism/wasm32.ini). Each variant runs three
# probes and every variant's output must be byte-identical to the first's:
#   gk-chain            (tests/determinism/gk_chain.c) the hash chains of
#                       every genre's bots from a fixed seed and of the 90
#                       published push-puzzle solutions, core only;
#   gk-lockstep-probe   (tests/determinism/gk_lockstep_probe.c) scripted
#                       matches of a host session and scripted peers over
#                       the wire codec and input buffer, with loss, an
#                       outage, delay changes, a desync, a removal: chains
#                       of every datagram and every step hash;
#   gk-predict-probe    (tests/determinism/gk_predict_probe.c) the
#                       prediction sync test over the peer engine: a peer
#                       mispredicting every step keeps the confirmed chain
#                       of one that does not, its head a fresh run's.
# i386 binaries run natively where the kernel can, else under qemu-i386.
# The wasm leg also links the core and the lockstep library as a browser
# client would (every public function exported, no main) and fails if the
# .wasm is over GK_WASM_MAX bytes (200 KiB), and prints its size.
# Variants build and run side by side, as many as there are cores; they
# are judged afterwards in the list's order. Prints the matrix's wall time.
set -eu
cd "$(dirname "$0")/.."
. scripts/lib.sh
# gcc-multilib conflicts with Debian's cross compilers, so -m32 comes from
# its parts: the i386 libc and gcc's 32-bit runtime.
gk_install meson ninja-build pkg-config gcc clang python3 libxxhash-dev \
  libc6-dev-i386 lib32gcc-12-dev gcc-aarch64-linux-gnu \
  libc6-dev-arm64-cross qemu-user emscripten
# node runs the wasm probes (emscripten's own dependency; nodesource's
# node, where installed, does as well).
command -v node > /dev/null || gk_install nodejs
# nodesource's node does not see Debian's acorn, which emcc -O2 needs.
NODE_PATH=${NODE_PATH:+$NODE_PATH:}/usr/share/nodejs
export NODE_PATH
wasm_max=${GK_WASM_MAX:-204800}
steps=${2:-6000}
[ "${1:-}" = "--steps" ] || steps=6000
root=build-det
det_t0=$(date +%s)
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

# The size of the core + the portable lockstep library in a browser
# client: every public function of the two archives exported, no main.
wasm_size() { # DIR OPT
  a="$1/libgamekit-core.a $1/src/net/libgk_lockstep.a"
  # shellcheck disable=SC2086
  ex=$(emnm --defined-only $a 2>/dev/null \
    | awk '$2 == "T" && $3 !~ /^gk__/ {print "_" $3}' | sort -u | paste -sd, -)
  # shellcheck disable=SC2086
  emcc -O"$2" --no-entry -sALLOW_MEMORY_GROWTH=1 -sEXPORTED_FUNCTIONS="$ex" \
    $a -o "$1/gk-lockstep.js" > "$1.size.log" 2>&1 \
    || { cat "$1.size.log"; return 1; }
  wc -c < "$1/gk-lockstep.wasm"
}

variants="gcc-O0 gcc-O3 clang-O0 clang-O3 i386-O0 i386-O3 aarch64-O0 aarch64-O3
  wasm32-O0 wasm32-O2 wasm32-Os wasm32-simd-Os"
probes="gk-chain gk-lockstep-probe gk-predict-probe"

# variant V: sets up and builds V's tree, runs both probes into
# $root/V.txt and, for an optimised wasm32 variant, links the size probe;
# what it has to say goes to $root/V.msg, its verdict (0 or 1) to
# $root/V.rc. Variants run side by side (below), so it prints nothing.
variant() {
  v=$1
  dir=$root/$v
  opt=${v##*-O}
  cross=""
  cc=gcc
  cargs=$xx
  : > "$root/$v.msg"
  echo 1 > "$root/$v.rc"
  case $v in
    clang-*) cc=clang ;;
    i386-*) cross="--cross-file $root/i386.ini" ;;
    aarch64-*) cross="--cross-file tests/determinism/aarch64.ini" ;;
    wasm32-*)
      cross="--cross-file tests/determinism/wasm32.ini"
      # the browser client's flags (web/gamekit/build.sh): SSE2 -> SIMD
      case $v in wasm32-simd-*) cargs="$xx -msimd128 -msse2" ;; esac
      ;;
  esac
  if [ -f "$dir/build.ninja" ]; then
    # a tree set up by an older matrix (-Dcore_only) gets the probe too
    meson configure "$dir" -Dcore_only=false -Dportable_only=true \
      > "$dir.setup.log" 2>&1 || { cat "$dir.setup.log" > "$root/$v.msg"; return; }
  else
    # shellcheck disable=SC2086
    CC=$cc meson setup "$dir" -Dportable_only=true -Dbuildtype=plain \
      -Doptimization="$opt" -Dc_args="$cargs" $cross > "$dir.setup.log" 2>&1 \
      || { cat "$dir.setup.log" > "$root/$v.msg"; return; }
  fi
  # shellcheck disable=SC2086
  meson compile -C "$dir" $probes > "$dir.build.log" 2>&1 \
    || { cat "$dir.build.log" > "$root/$v.msg"; return; }
  wrap=""
  ext=""
  case $v in
    aarch64-*) wrap="qemu-aarch64 -L /usr/aarch64-linux-gnu" ;;
    i386-*) [ -f "$root/wrap.ini" ] && wrap="qemu-i386 -L /" ;;
    wasm32-*) wrap="node --no-experimental-fetch" ext=.js ;;
  esac
  p=$dir/tests/determinism
  # shellcheck disable=SC2086
  if ! { $wrap "$p/gk-chain$ext" --steps "$steps" tests/data/push-puzzle \
      && $wrap "$p/gk-lockstep-probe$ext" \
      && $wrap "$p/gk-predict-probe$ext"; } > "$root/$v.txt"; then
    echo "FAIL $v: a probe did not complete" > "$root/$v.msg"
    return
  fi
  case $v in
    wasm32-O0) ;;
    wasm32-*)
      if ! size=$(wasm_size "$dir" "$opt"); then
        echo "FAIL $v: the size link failed" > "$root/$v.msg"
        return
      elif [ "$size" -gt "$wasm_max" ]; then
        echo "FAIL $v: core + lockstep library .wasm is $size bytes," \
          "over $wasm_max" > "$root/$v.msg"
        return
      fi
      echo "$v: core + lockstep library .wasm $size bytes" \
        "($(gzip -9c "$dir/gk-lockstep.wasm" | wc -c) gzipped," \
        "limit $wasm_max)" > "$root/$v.msg"
      ;;
  esac
  echo 0 > "$root/$v.rc"
}

# Most of a variant's time is one process (meson setup, a probe under
# qemu or node): run as many variants at once as there are cores, in
# batches, then judge them in the list's order against the first.
# shellcheck disable=SC2086
gk_batches variant $variants
status=0
first=""
for v in $variants; do
  if [ "$(cat "$root/$v.rc")" != 0 ]; then
    cat "$root/$v.msg"
    status=1
    continue
  fi
  runs=$(grep -vc '^lockstep ' "$root/$v.txt" || true)
  matches=$(grep -c '^lockstep ' "$root/$v.txt" || true)
  runs="$runs runs, $matches matches"
  if [ -z "$first" ]; then
    first=$v
    echo "$v: $runs (reference)"
  elif cmp -s "$root/$first.txt" "$root/$v.txt"; then
    echo "$v: $runs, identical to $first"
  else
    echo "FAIL $v differs from $first:"
    diff "$root/$first.txt" "$root/$v.txt" | head -20
    status=1
  fi
  if [ -s "$root/$v.msg" ]; then cat "$root/$v.msg"; fi
done
echo "determinism matrix: wall time $(($(date +%s) - det_t0)) s"
[ $status -eq 0 ] && echo "determinism matrix: all $(echo $variants | wc -w) variants identical"
exit $status
