#!/bin/sh
# check_lockstep_symbols.sh LIB CORE [CC]: fails if LIB (libgk_lockstep.a,
# the portable lockstep library, or libgk_config_kv.a) names any uv_, enet_
# or cJSON_ symbol, or needs a symbol that neither it, the core library
# CORE (libgamekit-core.a) nor libc defines.
set -eu
lib=$1
core=$2
cc=${3:-cc}
libc=$($cc -print-file-name=libc.so.6)
[ -f "$libc" ] || { echo "cannot find libc.so.6 via $cc"; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
syms() { awk 'NF >= 2 && $1 !~ /:$/ {print $1}' | sed 's/@.*//' | sort -u; }
nm --format=posix "$lib" | syms > "$tmp/all"
io=$(grep -E '^(uv_|enet_|cJSON_)' "$tmp/all" | tr '\n' ' ' || true)
if [ -n "$io" ]; then
  echo "$(basename "$lib") names I/O symbols: $io"
  exit 1
fi
{
  nm --defined-only --format=posix "$lib" | syms
  nm --defined-only --format=posix "$core" | syms
} | sort -u > "$tmp/own"
nm -u --format=posix "$lib" | syms | comm -23 - "$tmp/own" > "$tmp/undef"
nm -D --defined-only --format=posix "$libc" | syms > "$tmp/libc"
bad=""
for s in $(cat "$tmp/undef"); do
  case "$s" in
    __asan_*|__ubsan_*|__tsan_*|__sanitizer_*|__stack_chk_fail|_GLOBAL_OFFSET_TABLE_|__gcov_*|__llvm_*) continue ;;
  esac
  grep -qx -- "$s" "$tmp/libc" || bad="$bad $s"
done
if [ -n "$bad" ]; then
  echo "$(basename "$lib") needs symbols neither the core nor libc provides:$bad"
  exit 1
fi
echo "ok: no uv_/enet_/cJSON_; $(grep -c . "$tmp/undef") undefined symbols beyond the core, all from libc"
